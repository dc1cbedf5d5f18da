#!/usr/bin/env python3
"""Reads Kiosk's event stream (GET /events) as a foreign client would, with httpx-sse.

    event_stream.py BASE_URL USER PASSWORD COUNT [--drop-every N] [--types T] [--after ID]

Reads until COUNT events have arrived; every N events (--drop-every) it closes the connection and
resumes with Last-Event-ID, as a client that lost its connection. Prints a JSON report:
{"ids": [...], "types": [...], "reconnects": K, "keepalive_seen": bool}. Exits non-zero on any error,
on a repeated id, or on an id that does not increase.
"""
import argparse
import json
import sys
import time

import httpx
from httpx_sse import connect_sse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("user")
    parser.add_argument("password")
    parser.add_argument("count", type=int)
    parser.add_argument("--drop-every", type=int, default=0)
    parser.add_argument("--types", default="")
    parser.add_argument("--after", default="")
    parser.add_argument("--timeout", type=float, default=60.0)
    options = parser.parse_args()

    ids, types, reconnects = [], [], 0
    last = options.after or None
    deadline = time.monotonic() + options.timeout
    params = {"types": options.types} if options.types else {}
    with httpx.Client(auth=(options.user, options.password), timeout=httpx.Timeout(30.0)) as client:
        while len(ids) < options.count:
            if time.monotonic() > deadline:
                raise SystemExit(f"only {len(ids)} of {options.count} events arrived in {options.timeout} s")
            headers = {"Last-Event-ID": last} if last else {}
            if not last:
                params_now = dict(params, after="0")
            else:
                params_now = params
            read_here = 0
            with connect_sse(client, "GET", options.base + "/events", params=params_now, headers=headers) as source:
                if source.response.status_code != 200:
                    raise SystemExit(f"GET /events answered {source.response.status_code}: {source.response.read()!r}")
                content_type = source.response.headers.get("content-type", "")
                if not content_type.startswith("text/event-stream"):
                    raise SystemExit(f"content type {content_type!r}")
                for event in source.iter_sse():
                    if not event.id:
                        continue
                    body = json.loads(event.data)
                    if body["id"] != event.id or body["type"] != event.event:
                        raise SystemExit(f"the data {body} does not match the event's id {event.id} and type {event.event}")
                    position = int(event.id.removeprefix("evt_"))
                    if ids and position <= ids[-1]:
                        raise SystemExit(f"event {event.id} after {ids[-1]}: repeated or out of order")
                    ids.append(position)
                    types.append(event.event)
                    last = event.id
                    read_here += 1
                    if len(ids) >= options.count:
                        break
                    if options.drop_every and read_here >= options.drop_every:
                        reconnects += 1
                        break
    print(json.dumps({"ids": ids, "types": types, "reconnects": reconnects}))


if __name__ == "__main__":
    main()
