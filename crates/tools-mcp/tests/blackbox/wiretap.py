"""stdio wire tap: wiretap.py LOGFILE cmd args... ; logs every line in both directions.

Written for this project (MIT OR Apache-2.0, like the workspace).
Each log line is "<monotonic seconds> <C->S|S->C> <json line>"; C is the gateway, S the server.
"""
import subprocess, sys, threading, time
log = open(sys.argv[1], "a"); cmd = sys.argv[2:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stderr.fileno())
lock = threading.Lock()
def w(tag, line):
    with lock: log.write(f"{time.monotonic():.2f} {tag} {line.decode().rstrip()}\n"); log.flush()
def up():
    for line in sys.stdin.buffer:
        w("C->S", line); p.stdin.write(line); p.stdin.flush()
    p.stdin.close()
threading.Thread(target=up, daemon=True).start()
for line in p.stdout:
    w("S->C", line); sys.stdout.buffer.write(line); sys.stdout.buffer.flush()
sys.exit(p.wait())
