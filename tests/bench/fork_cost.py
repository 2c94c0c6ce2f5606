#!/usr/bin/env python3
# What the agent adds to the host's fork(): run with the agent preloaded,
#
#   mkdir -m 700 /tmp/fork-cost
#   MEMPROF_SOCKET_DIR=/tmp/fork-cost LD_PRELOAD=$PWD/build/agent/libmemprof_agent.so \
#     python3 tests/bench/fork_cost.py
#   MEMPROF_SOCKET_DIR=/tmp/fork-cost python3 tests/bench/fork_cost.py   # without
#
# It times 20 fork()s with the agent idle (median), then one fork() while a
# gRPC call is held open on the agent's socket (the agent then stops gRPC
# before the fork so that the child can start its own). Without the agent the
# second line is skipped.
import os
import socket
import struct
import sys
import time

def frame(t, f, sid, payload): return struct.pack(">I", len(payload))[1:] + bytes([t, f]) + struct.pack(">I", sid) + payload
def lit(n, v): return b"\x00" + bytes([len(n)]) + n + bytes([len(v)]) + v
d = os.environ["MEMPROF_SOCKET_DIR"]
path = f"{d}/{os.getpid()}.sock"
for _ in range(40):
    if os.path.exists(path): break
    time.sleep(0.05)
def fork_ms(n=20):
    ts = []
    for _ in range(n):
        t = time.perf_counter(); pid = os.fork()
        if pid == 0: os._exit(0)
        ts.append((time.perf_counter() - t) * 1000); os.waitpid(pid, 0)
    ts.sort(); return ts[len(ts)//2]
print(f"idle: fork median {fork_ms():.2f} ms")
if not os.path.exists(path):
    sys.exit(0)
s = socket.socket(socket.AF_UNIX); s.connect(path)
hdrs = lit(b":method", b"POST") + lit(b":scheme", b"http") + lit(b":path", b"/memprof.v1.MemoryProfile/Status") + lit(b":authority", b"x") + lit(b"content-type", b"application/grpc") + lit(b"te", b"trailers")
s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"") + frame(1, 4, 1, hdrs)); s.recv(100)
t = time.perf_counter(); pid = os.fork()
if pid == 0: os._exit(0)
print(f"first fork with a call in flight: {(time.perf_counter()-t)*1000:.2f} ms"); os.waitpid(pid, 0)
