# Ruby's xmlrpc/client against the protocol test methods.   ruby protocol_ruby.rb URL -> JSON report
require "json"
require "xmlrpc/client"
XMLRPC::Config.send(:remove_const, :ENABLE_NIL_CREATE); XMLRPC::Config::ENABLE_NIL_CREATE = true
XMLRPC::Config.send(:remove_const, :ENABLE_NIL_PARSER); XMLRPC::Config::ENABLE_NIL_PARSER = true

client = XMLRPC::Client.new2(ARGV[0], nil, 120)   # its default 30 s read timeout is too short beside the other suites
report = {}
values = {
  "int" => 42, "true" => true, "false" => false, "string" => "Presència <b>&amp; \"q\"", "empty" => "",
  "double" => 3.25, "nil" => nil, "array" => [1, "two", [3.5, false]], "struct" => { "a" => 1, "é" => "ü" },
  "datetime" => XMLRPC::DateTime.new(2012, 5, 17, 8, 30, 5),
  "base64" => XMLRPC::Base64.new((0..255).map(&:chr).join.b),
}
report["echo"] = values.to_h do |name, value|
  got = client.call("test.echo", value)
  same = case value
         when XMLRPC::DateTime then got.to_a == value.to_a
         when XMLRPC::Base64 then got.b == value.decoded.b
         else got == value
         end
  [name, same]
end
report["i8"] = client.call("test.big")
report["sum"] = client.call("test.sum", 20, "22")
ok, fault = client.call2("test.fault", 17, "custom fault")
report["fault"] = [fault.faultCode, fault.faultString]
ok, unknown = client.call2("no.such.method")
report["unknown"] = unknown.faultCode
report["methods"] = client.call("system.listMethods")
report["signature"] = client.call("system.methodSignature", "test.sum")
report["capabilities"] = client.call("system.getCapabilities").keys.sort
_ok, results = client.multicall2(["test.sum", 1, 2], ["test.fault", 3, "in place"], ["test.echo", "after"])
report["multicall"] = results.map { |r| r.is_a?(XMLRPC::FaultException) ? [r.faultCode, r.faultString] : r }
puts JSON.generate(report)
