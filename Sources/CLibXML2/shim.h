#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED   /* keeps <unicode/ucnv.h> (system ICU 72) out of the import; see TOOLCHAIN.md */
#include <libxml/parser.h>
#include <libxml/xmlreader.h>
#include <libxml/xmlerror.h>
