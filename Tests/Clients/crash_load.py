"""Load that the crash-injection test kills the server under (Python's xmlrpc.client and urllib).

    crash_load.py PORT LOG demos PREFIX DATE     8 threads, many devices: consumirDemo, getEdicio of the
                                                  free edition 8 and of the subscribers' edition 1 (a demo)
    crash_load.py PORT LOG bundles DATE...        getEdicio of each issue at once, then each bundle's GET

Every answer the server gave is appended to LOG as it arrives ("grant DEVICE", "download DEVICE"), so
after a kill -9 the test knows what the server acknowledged and must still have ("used DEVICE": a
demo grant spent on edition 1). Stops at the first
error (the server was killed).
"""
import os
import sys
import threading
import urllib.request
import xmlrpc.client

port, log, mode = sys.argv[1], sys.argv[2], sys.argv[3]
url = f"http://kiosk:secret@127.0.0.1:{port}/RPC2"
fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)


def note(line):
    os.write(fd, (line + "\n").encode())


def demos(worker, prefix, date):
    proxy = xmlrpc.client.ServerProxy(url)
    for i in range(10_000):
        device = f"{prefix}-{worker}-{i % 7}"
        try:
            answer = proxy.epusuaris.consumirDemo("quiosc", device, "", "crash test", "ios", "")
            if answer["servir_demo"] == "1":
                note(f"grant {device}")
            proxy.epquiosc.getEdicio("quiosc", answer["iden_key"], 8, date, "0", "ios")
            note(f"download {device}")
            try:
                proxy.epquiosc.getEdicio("quiosc", answer["iden_key"], 1, date, "0", "ios")
                note(f"used {device}")
                note(f"download {device}")
            except xmlrpc.client.Fault as fault:
                if fault.faultCode != 5:
                    raise
        except Exception:
            return


def bundle(date):
    try:
        proxy = xmlrpc.client.ServerProxy(url)
        issue = proxy.epquiosc.getEdicio("quiosc", "", 8, date, "0", "ios")
        with urllib.request.urlopen(issue["zip"], timeout=30) as response:
            while response.read(1 << 16):
                pass
        note(f"bundle {date}")
    except Exception:
        return


if mode == "demos":
    threads = [threading.Thread(target=demos, args=(n, sys.argv[4], sys.argv[5])) for n in range(8)]
else:
    threads = [threading.Thread(target=bundle, args=(date,)) for date in sys.argv[4:]]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
