# Perl's RPC::XML::Client against the protocol test methods.   perl protocol_perl.pl URL -> JSON report
use strict;
use warnings;
use JSON::PP;
use RPC::XML;
use RPC::XML::Client;
$RPC::XML::ALLOW_NIL = 1;
$RPC::XML::ENCODING = "utf-8";   # strings below are UTF-8 bytes

my $client = RPC::XML::Client->new($ARGV[0]);
my %report;
sub call { my $r = $client->send_request(@_); die "transport: $r\n" unless ref $r; return $r; }

my %values = (
    int => RPC::XML::int->new(42), i8 => RPC::XML::i8->new("1099511627776"),
    true => RPC::XML::boolean->new(1), string => RPC::XML::string->new("Presència <b>&amp; \"q\""),
    empty => RPC::XML::string->new(""), double => RPC::XML::double->new(3.25), nil => RPC::XML::nil->new(),
    datetime => RPC::XML::datetime_iso8601->new("20120517T08:30:05"),
    base64 => RPC::XML::base64->new(join("", map { chr } 0..255)),
    array => RPC::XML::array->new(RPC::XML::int->new(1), RPC::XML::string->new("two")),
    struct => RPC::XML::struct->new(a => RPC::XML::int->new(1), "é" => RPC::XML::string->new("ü")),
);
# A value as text, structs with sorted keys: Perl does not keep numbers and strings apart reliably.
sub canon {
    my ($v) = @_;
    return "undef" unless defined $v;
    return "[" . join(",", map { canon($_) } @$v) . "]" if ref $v eq "ARRAY";
    return "{" . join(",", map { "$_=" . canon($v->{$_}) } sort keys %$v) . "}" if ref $v eq "HASH";
    return "'$v'";
}
my %echo;
for my $name (sort keys %values) {
    my $sent = $values{$name};
    my $got = call("test.echo", $sent);
    my $same = $got->type eq $sent->type && canon($got->value) eq canon($sent->value);
    $echo{$name} = $same ? JSON::PP::true : JSON::PP::false;
}
$report{echo} = \%echo;
$report{i8} = 0 + call("test.big")->value;
$report{sum} = 0 + call("test.sum", RPC::XML::int->new(20), RPC::XML::string->new("22"))->value;
my $fault = call("test.fault", RPC::XML::int->new(17), RPC::XML::string->new("custom fault"));
$report{fault} = [0 + $fault->code, $fault->string];
$report{unknown} = 0 + call("no.such.method")->code;
$report{methods} = call("system.listMethods")->value;
$report{signature} = call("system.methodSignature", RPC::XML::string->new("test.sum"))->value;
$report{capabilities} = [sort keys %{ call("system.getCapabilities")->value }];
my $multi = call("system.multicall", RPC::XML::array->new(
    RPC::XML::struct->new(methodName => "test.sum", params => RPC::XML::array->new(1, 2)),
    RPC::XML::struct->new(methodName => "test.fault", params => RPC::XML::array->new(3, "in place")),
    RPC::XML::struct->new(methodName => "test.echo", params => RPC::XML::array->new("after"))))->value;
$report{multicall} = [map { ref $_ eq "ARRAY" ? ($_->[0] =~ /^-?\d+$/ ? 0 + $_->[0] : $_->[0])
                                               : [0 + $_->{faultCode}, $_->{faultString}] } @$multi];
print JSON::PP->new->canonical->encode(\%report), "\n";
