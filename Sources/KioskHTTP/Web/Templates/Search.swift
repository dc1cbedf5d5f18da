extension WebTemplates {
    /// `/web/{app}/cerca?q=…`: pages whose text matches, newest first, each with its highlighted excerpt
    /// (on issues the reader may open; the others name the page only).
    static let search = #"""
    {{<layout}}{{$main}}
    {{#content}}
    <h1>{{t.search_results}}: {{query}}</h1>
    {{#problem}}<p class="notice" role="alert">{{.}}</p>{{/problem}}
    {{^hits}}{{^problem}}<p>{{t.no_results}}</p>{{/problem}}{{/hits}}
    <ol class="hits">
    {{#hits}}<li><a href="{{url}}">{{title}} · {{edition}} · {{date}} · {{t.page}} {{page}}</a>
    <p class="meta">{{#hasExcerpt}}{{{fragment}}}{{/hasExcerpt}}{{^hasExcerpt}}{{t.excerpt_for_subscribers}}{{/hasExcerpt}}</p></li>{{/hits}}
    </ol>
    {{/content}}
    {{/main}}{{/layout}}
    """#
}
