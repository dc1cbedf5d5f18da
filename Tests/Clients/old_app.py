"""The 2012 iOS app's requests, byte for byte, against a running Kiosk.

The app used "The Cocoa XML-RPC Framework" (XMLRPCRequest / XMLRPCDefaultEncoder) over NSURLConnection
(report, section 8.5.5): the encoder writes `<?xml version="1.0"?>` and no whitespace, every NSString
as `<string>`, NSNumber as `<i4>`, `<boolean>` or `<double>`, NSArray as `<array><data>`, NSDictionary as
`<struct>`; NSURLConnection sends no credentials until the server's 401 challenge, then repeats the
request with Basic credentials on the same connection.

Usage: old_app.py PORT CALLS_JSON
CALLS_JSON is a list of {"method", "params", "path" (default /xmlrpc/index.php), "content_type"
(default "text/xml"; null: no Content-Type header)}; JSON strings, integers, booleans, floats, lists
and objects stand for NSString, NSNumber, NSArray and NSDictionary. The calls go one after another on
one connection. Prints a JSON list: per call the HTTP status, whether a challenge came first, and the
decoded result or fault (decoded by Python's xmlrpc.client, not by us).
"""
import base64
import json
import socket
import sys
import xmlrpc.client

USER_AGENT = "ElQuiosc/1.2 CFNetwork/548.1.4 Darwin/11.0.0"


def escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def encode_object(value):
    if value is None:
        return encode_object("")
    if isinstance(value, bool):
        return "<value><boolean>%d</boolean></value>" % (1 if value else 0)
    if isinstance(value, int):
        return "<value><i4>%d</i4></value>" % value
    if isinstance(value, float):
        return "<value><double>%s</double></value>" % repr(value)
    if isinstance(value, str):
        return "<value><string>%s</string></value>" % escape(value)
    if isinstance(value, list):
        return "<value><array><data>" + "".join(encode_object(v) for v in value) + "</data></array></value>"
    if isinstance(value, dict):
        return "<value><struct>" + "".join(
            "<member><name>%s</name>%s</member>" % (escape(k), encode_object(v)) for k, v in value.items()
        ) + "</struct></value>"
    raise TypeError(type(value))


def encode_call(method, params):
    body = '<?xml version="1.0"?><methodCall><methodName>%s</methodName><params>' % escape(method)
    for parameter in params:
        body += "<param>" + encode_object(parameter) + "</param>"
    return (body + "</params></methodCall>").encode("utf-8")


class Connection:
    def __init__(self, port):
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.buffer = b""

    def send(self, path, body, content_type, credentials):
        head = "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUser-Agent: %s\r\n" % (path, self.port, USER_AGENT)
        if content_type is not None:
            head += "Content-Type: %s\r\n" % content_type
        head += "Content-Length: %d\r\nAccept: */*\r\nAccept-Language: ca-es\r\n" % len(body)
        head += "Accept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\n"
        if credentials:
            head += "Authorization: Basic %s\r\n" % base64.b64encode(credentials.encode()).decode()
        self.sock.sendall((head + "\r\n").encode() + body)
        return self.read_response()

    def read_response(self):
        while b"\r\n\r\n" not in self.buffer:
            part = self.sock.recv(65536)
            if not part:
                raise ConnectionError("closed before a response")
            self.buffer += part
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            part = self.sock.recv(65536)
            if not part:
                raise ConnectionError("closed inside a body")
            self.buffer += part
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, headers, body


def main():
    port = int(sys.argv[1])
    calls = json.loads(sys.argv[2])
    connection = Connection(port)
    report = []
    for call in calls:
        body = encode_call(call["method"], call.get("params", []))
        path = call.get("path", "/xmlrpc/index.php")
        content_type = call.get("content_type", "text/xml")
        status, headers, answer = connection.send(path, body, content_type, None)
        challenged = False
        if status == 401 and headers.get("www-authenticate", "").startswith("Basic"):
            challenged = True
            status, headers, answer = connection.send(path, body, content_type, "kiosk:secret")
        entry = {"status": status, "challenged": challenged, "content_type": headers.get("content-type", "")}
        if status == 200:
            try:
                entry["result"] = xmlrpc.client.loads(answer.decode("utf-8"))[0][0]
            except xmlrpc.client.Fault as fault:
                entry["fault"] = {"code": fault.faultCode, "message": fault.faultString}
        else:
            entry["body"] = answer.decode("utf-8", "replace")
        report.append(entry)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
