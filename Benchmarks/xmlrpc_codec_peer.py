#!/usr/bin/env python3
"""Python peer of the XMLRPCBenchmark: the same three measures with xmlrpc.client.dumps/loads.

Run by `swift run -c release XMLRPCBenchmark` (which passes the exact payload bytes), or alone:
    python3 Benchmarks/xmlrpc_codec_peer.py [--seconds 3]
"""
import argparse
import platform
import time
import xmlrpc.client


def typical_response():
    base = "http://127.0.0.1:8080/files/3k2Jx9QpLr7TbW0sVn4MhY8cZe1uDa6F/65a3f1b2/editions/2/2025-06-30"
    sections = ["Portada", "Política", "Societat", "Economia", "Esports", "Cultura", "Opinió", "Comarques"]
    pages = []
    for index in range(1, 49):
        number = "%03d" % index
        pages.append({
            "id": str(90000 + index), "seccio_id": str((index - 1) // 6 + 1), "seccio": sections[(index - 1) // 6],
            "numero": str(index), "jpg": f"{base}/jpg/{number}.jpg", "jpgA": f"{base}/jpgA/{number}.jpg",
            "pdf": f"{base}/pdf/{number}.pdf",
        })
    return {
        "id": "4711", "titol": "Diari de Proves", "edicio": "2", "data": "2025-06-30",
        "zip": f"{base}/zip/edicio.zip", "zip_size": "48213377",
        "zip_sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "pagines": pages,
    }


def typical_call():
    params = ("subscriber@example.cat", "0123456789abcdef0123456789abcdef", "2", "2025-06-30", "android", "2.3.1")
    return xmlrpc.client.dumps(params, methodname="epquiosc.getEdicio").encode("utf-8")


def measure(seconds, body):
    def run(duration):
        start = time.perf_counter()
        iterations = 0
        while True:
            for _ in range(16):
                body()
            iterations += 16
            elapsed = time.perf_counter() - start
            if elapsed >= duration:
                return iterations, elapsed
    run(min(0.3, seconds / 5))
    iterations, elapsed = run(seconds)
    return iterations / elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--response", help="file with the response document to decode")
    parser.add_argument("--call", help="file with the call document to decode")
    parser.add_argument("--machine", action="store_true", help="tab-separated output for XMLRPCBenchmark")
    args = parser.parse_args()

    if args.response:
        with open(args.response, "rb") as f:
            response_bytes = f.read()
        value = xmlrpc.client.loads(response_bytes)[0][0]
    else:
        value = typical_response()
        response_bytes = xmlrpc.client.dumps((value,), methodresponse=True).encode("utf-8")
    if args.call:
        with open(args.call, "rb") as f:
            call_bytes = f.read()
    else:
        call_bytes = typical_call()

    def encode_response():
        return xmlrpc.client.dumps((value,), methodresponse=True).encode("utf-8")

    def decode_response():
        return xmlrpc.client.loads(response_bytes)

    def server_codec():
        params, method = xmlrpc.client.loads(call_bytes)
        return encode_response()

    encoded_size = len(encode_response())
    results = [
        ("encode response", measure(args.seconds, encode_response), encoded_size),
        ("decode response", measure(args.seconds, decode_response), len(response_bytes)),
        ("decode call + encode response", measure(args.seconds, server_codec), len(call_bytes) + encoded_size),
    ]
    version = f"{platform.python_implementation()} {platform.python_version()}"
    if args.machine:
        print(f"PYTHON\t{version}")
        for name, per_second, size in results:
            print(f"RESULT\t{name}\t{per_second:.1f}\t{per_second * size / 1e6:.2f}")
    else:
        print(f"{version}: response {len(response_bytes)} bytes, call {len(call_bytes)} bytes; MB = 10^6 bytes")
        print(f"{'measure':32}{'calls/s':>12}{'MB/s':>10}")
        for name, per_second, size in results:
            print(f"{name:32}{per_second:12.0f}{per_second * size / 1e6:10.1f}")


if __name__ == "__main__":
    main()
