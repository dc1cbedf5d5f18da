"""Python's xmlrpc.client against the protocol test methods: every type, introspection, multicall, faults.

    python3 protocol_python.py URL   -> prints a JSON report the Swift test checks
"""
import base64
import datetime
import json
import sys
import xmlrpc.client

url = sys.argv[1]
p = xmlrpc.client.ServerProxy(url, allow_none=True, use_builtin_types=True)
report = {}

values = {
    "int": 42, "negative": -2147483648, "true": True, "false": False,
    "string": "Presència <b>&amp; 'quotes' \"double\"\ttab\nline",
    "empty": "", "double": 3.25, "tiny": 1e-7, "big": 1.5e20,
    "datetime": datetime.datetime(2012, 5, 17, 8, 30, 5),
    "base64": bytes(range(256)),
    "nil": None,
    "array": [1, "two", [3.0, False]],
    "struct": {"a": 1, "b": {"c": ["d"]}, "é": "ü"},
}
echoed = {}
for name, value in values.items():
    got = p.test.echo(value)
    echoed[name] = got == value and type(got) is type(value)
report["echo"] = echoed
report["i8"] = p.test.big()
report["sum"] = p.test.sum(20, "22")
try:
    p.test.fault(17, "custom fault")
except xmlrpc.client.Fault as f:
    report["fault"] = [f.faultCode, f.faultString]
try:
    p.no.such.method()
except xmlrpc.client.Fault as f:
    report["unknown"] = f.faultCode
try:
    p.test.sum("x", 1)
except xmlrpc.client.Fault as f:
    report["bad_param"] = [f.faultCode, f.faultString]
report["methods"] = p.system.listMethods()
report["signature"] = p.system.methodSignature("test.sum")
report["help"] = p.system.methodHelp("test.sum")
report["capabilities"] = sorted(p.system.getCapabilities().keys())
m = xmlrpc.client.MultiCall(p)
m.test.sum(1, 2)
m.test.fault(3, "in place")
m.test.echo("after")
results = m()
outcomes = []
for i in range(3):
    try:
        outcomes.append(results[i])
    except xmlrpc.client.Fault as f:
        outcomes.append([f.faultCode, f.faultString])
report["multicall"] = outcomes
print(json.dumps(report))
