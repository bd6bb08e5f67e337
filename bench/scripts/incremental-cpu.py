#!/usr/bin/env python3
"""Agent CPU-seconds of incrementals, for agent variants side by side.

Usage: incremental-cpu.py SERVER.jar OUTDIR ROUNDS NAME=LAUNCHER:AGENT.jar[:JAVA_OPTS] ...

One server (TLS off); each variant backs up its own volume, first FULL.img (a full backup that also
records the launcher's class-data archive), then ROUNDS incrementals alternating INCR.img and FULL.img
(each an incremental of the other). Variants take turns within a round, in reverse order every other
round, so they share the machine's load. Prints each run's agent CPU-seconds (rusage of the launcher
process, which execs the JVM) and wall seconds, then the median per variant. Images: IMAGES env,
"full.img:incr.img" (default /work/prof/full.img:/work/prof/incr.img).
"""
import os, socket, subprocess, sys, time, statistics, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proc_stat import free_port
server_jar, out, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
variants = [v.split("=", 1) for v in sys.argv[4:]]
shutil.rmtree(out, ignore_errors=True); os.makedirs(out)
data = os.path.join(out, "data"); os.makedirs(data)
token = subprocess.run(["java", "-cp", server_jar, "-Dloader.main=org.holdfast.server.app.CredentialTool",
    "org.springframework.boot.loader.launch.PropertiesLauncher", "create-token", "--data-dir", data, "--name", "p", "--role", "agent"],
    check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1].split()[-1]
port, http = free_port(), free_port()
server = subprocess.Popen(["java", "-Xmx1g", "-jar", server_jar, f"--holdfast.data-dir={data}", f"--server.port={http}",
    "--holdfast.ingest.host=127.0.0.1", f"--holdfast.ingest.port={port}", "--holdfast.tls.enabled=false"],
    stdout=open(os.path.join(out, "server.log"), "w"), stderr=subprocess.STDOUT)
for _ in range(240):
    try: socket.create_connection(("127.0.0.1", port), timeout=1).close(); break
    except OSError: time.sleep(0.5)
imgs = os.environ.get("IMAGES", "/work/prof/full.img:/work/prof/incr.img").split(":")
res = {name: [] for name, _ in variants}
def run(name, spec, img, vol, record=True):
    parts = spec.split(":", 2)
    env = dict(os.environ, HOLDFAST_TOKEN=token, HOLDFAST_AGENT_JAR=parts[1], HOLDFAST_AGENT_CACHE=os.path.join(out, "cache-" + name),
               JAVA_OPTS="-Xmx256m " + (parts[2] if len(parts) > 2 else ""))
    t0 = time.time()
    p = subprocess.Popen([parts[0], "backup", "--server", f"127.0.0.1:{port}", "--no-tls", "--volume", vol, "--json",
                          "--source", img, "--state-dir", os.path.join(out, "state-" + name)], env=env,
                         stdout=open(os.path.join(out, f"{name}.out"), "a"), stderr=subprocess.STDOUT)
    _, st, ru = os.wait4(p.pid, 0)
    if st != 0: sys.exit(f"{name} failed, see {out}/{name}.out")
    cpu = ru.ru_utime + ru.ru_stime
    if record: res[name].append(cpu)
    return cpu, time.time() - t0
try:
    for name, spec in variants:  # full backup of each variant's own volume (and its CDS archive)
        run(name, spec, imgs[0], "v-" + name, record=False)
    for r in range(rounds):
        for name, spec in (variants if r % 2 == 0 else variants[::-1]):
            cpu, wall = run(name, spec, imgs[(r + 1) % 2], "v-" + name)
            print(f"round {r} {name}: {cpu:.2f} cpu-s {wall:.2f} wall-s load {os.getloadavg()[0]:.1f}", flush=True)
finally:
    server.terminate(); server.wait(60)
for name, v in res.items():
    print(f"{name}: median {statistics.median(v):.2f} mean {statistics.mean(v):.2f} min {min(v):.2f} n={len(v)} {['%.2f'%x for x in v]}")
