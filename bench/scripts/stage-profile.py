#!/usr/bin/env python3
"""CPU-seconds per GiB by stage for the agent and the server: full backup, incremental, restore.

Runs the real server jar and the real agent jar (TLS off, loopback) with Java Flight Recorder,
reads per-thread CPU from /proc, and splits each process's Java-thread CPU over stages by the
share of JFR execution samples whose stack first meets that stage's code. JIT is the CPU of the
C1/C2 compiler threads, GC that of the collector threads (both from /proc, not sampled).

Usage: stage-profile.py --server-jar S --agent-jar A --image FULL.img --changed INCR.img --out DIR [--server-options OPTS]
                        [--warm-image OTHER.img]
The server gets the options of server/bin/jvm.options first (as its launcher does), then -Xmx1g and OPTS.
"""
import argparse
import collections
import json
import os
import shutil
import socket
import subprocess
import sys
import time

from proc_stat import free_port, process_cpu

# (stage, markers): the first frame of a stack, top down, that contains any marker decides the
# stage; frames of neither kind (JDK plumbing, system calls) are passed over. JIT and GC are
# decided first, by any frame of the stack (they run on their own threads).
VM_STAGES = [("JIT", ["CompileBroker::", "C2Compiler::", "Compilation::"]),
             ("GC", ["GCTaskThread", "G1", "ConcurrentGCThread", "WorkerThread::run", "VMThread::"]),
             ("class loading", ["SystemDictionary::", "ClassLoader", "LauncherHelper", "InterpreterRuntime::resolve",
                                "LinkResolver::"])]
HASH = ["sun.security.provider.SHA", "sun.security.provider.DigestBase", "java.security.MessageDigest",
        "org.holdfast.common.hash.BlockHasher.sha256", "sha256"]
AGENT_STAGES = [
    ("zero detection", ["org.holdfast.common.hash.ZeroBlocks"]),
    ("hash", HASH),
    ("compress", ["ZstdCompressCtx", "ZSTD_compress", "org.holdfast.common.compress.BlockCodec.compress"]),
    ("decode", ["ZstdDecompressCtx", "ZSTD_decompress", "org.holdfast.common.compress.BlockCodec.decompress"]),
    ("write", ["org.holdfast.client.restore.RestoreWriter"]),
    ("read", ["org.holdfast.client.scan", "org.holdfast.client.qcow2"]),
    ("wire", ["io.netty", "org.holdfast.common.protocol", "org.holdfast.client.net", "sun.nio.ch.SocketDispatcher",
              "sun.security.ssl", "org.bouncycastle"]),
    ("session", ["org.holdfast.client"]),
]
# server work that no phase asked for, decided by any frame of the stack like JIT and GC: the block
# survey of the statistics, which a commit starts (at most every 10 s) and which walks every stored block
SERVER_BACKGROUND = [("stats", ["org.holdfast.server.gc.StoreSurvey", "org.holdfast.server.stats."])]
SERVER_STAGES = [
    ("verify", HASH + ["ZstdDecompressCtx", "ZSTD_decompress", "org.holdfast.server.ingest.PayloadDigester"]),
    ("compress", ["ZstdCompressCtx", "ZSTD_compress"]),
    ("store", ["org.holdfast.server.store.DataLog", "org.holdfast.server.store.DataStore.append",
               "org.holdfast.server.store.DataStore.read", "org.holdfast.server.store.RecordFormat",
               "org.holdfast.server.store.FrameFormat"]),
    ("commit", ["org.holdfast.server.catalog", "org.holdfast.server.gc", "org.holdfast.gc", "org.rocksdb", "rocksdb::", "librocksdbjni",
                "org.holdfast.server.store"]),
    ("dedup", ["org.holdfast.server.engine", "org.holdfast.server.container"]),
    ("wire", ["io.netty", "org.holdfast.common.protocol", "sun.nio.ch.SocketDispatcher", "sun.security.ssl",
              "org.bouncycastle"]),
    ("session", ["org.holdfast.server.ingest"]),
]


def server_jvm_options(server_jar, extra):
    """server/bin/jvm.options as the launcher (server/bin/holdfast-server) reads it, then extra: one option
    a line, '#' starts a comment, and a collector among extra replaces the file's (the JVM refuses two)."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(server_jar))), "bin", "jvm.options"),
                  os.path.join(here, "..", "..", "server", "bin", "jvm.options")]
    found = next((c for c in candidates if os.path.isfile(c)), None)
    collector = any("GC" in o for o in extra)
    options = []
    if found:
        with open(found) as f:
            for line in f:
                o = line.split("#", 1)[0].strip()
                if o and not (collector and o.startswith("-XX:+Use") and o.endswith("GC")):
                    options.append(o)
    return options + extra


def stage_of(frames, stages, background=()):
    for stage, markers in VM_STAGES + list(background):
        if any(m in fr for fr in frames for m in markers):
            return stage
    for fr in frames:
        for stage, markers in stages:
            if any(m in fr for m in markers):
                return stage
    return "other"


def samples(jfr_file, since=None, until=None):
    """(epoch seconds, frames top-down) of every execution sample in a JFR file."""
    raw = subprocess.run(["jfr", "print", "--json", "--events", "jdk.ExecutionSample", "--stack-depth", "64", jfr_file],
                         check=True, capture_output=True, text=True).stdout
    for e in json.loads(raw)["recording"]["events"]:
        v = e["values"]
        t = parse_time(v["startTime"])
        if (since is not None and t < since) or (until is not None and t > until):
            continue
        st = v.get("stackTrace") or {}
        frames = [((f["method"].get("type") or {}).get("name") or "").replace("/", ".") + "." + f["method"]["name"]
                  for f in st.get("frames", [])]
        yield t, frames


def parse_time(s):
    from datetime import datetime
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def shares(jfr_file, stages, since=None, until=None, background=()):
    c = collections.Counter(stage_of(fr, stages, background) for _, fr in samples(jfr_file, since, until))
    n = sum(c.values()) or 1
    return {k: v / n for k, v in c.items()}, sum(c.values())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server-jar", required=True)
    ap.add_argument("--agent-jar", required=True)
    ap.add_argument("--profiler", required=True, help="async-profiler's libasyncProfiler.so (Maven Central: tools.profiler:async-profiler:3.0)")
    ap.add_argument("--image", required=True, help="the volume of the full backup")
    ap.add_argument("--changed", required=True, help="the same volume after a day's changes (incremental)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--agent-launcher", help="run the agent through this launcher (client/bin/holdfast-agent: class-data "
                    "sharing and its JIT settings) instead of java -jar; a warm-up backup first records its archive")
    ap.add_argument("--agent-options", default="", help="extra agent options for backups, e.g. '--frame-size 262144'")
    ap.add_argument("--server-options", default="", help="extra server JVM options, after those of server/bin/jvm.options "
                    "(which the server launcher reads) and this script's -Xmx1g, so they win")
    ap.add_argument("--warm-image", help="back this image up as another volume before the phases, so that the measured "
                    "server is warm (JIT compiled); use an image whose blocks the measured one does not share, or the full "
                    "backup deduplicates against it")
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    data, state = os.path.join(out, "data"), os.path.join(out, "state")
    os.makedirs(data)
    token = subprocess.run(["java", "-cp", a.server_jar, "-Dloader.main=org.holdfast.server.app.CredentialTool",
                            "org.springframework.boot.loader.launch.PropertiesLauncher", "create-token", "--data-dir", data,
                            "--name", "profile", "--role", "agent"], check=True, capture_output=True, text=True).stdout
    token = token.strip().splitlines()[-1].split()[-1]
    port, http = free_port(), free_port()

    def profiled(jfr):
        return f"-agentpath:{a.profiler}=start,event=itimer,interval=2ms,file={jfr}"

    server_jfr = os.path.join(out, "server.jfr")
    jvm = server_jvm_options(a.server_jar, ["-Xmx1g"] + a.server_options.split())
    print("server JVM options: " + " ".join(jvm), file=sys.stderr)
    server = subprocess.Popen(["java"] + jvm + [profiled(server_jfr), "-jar", a.server_jar, f"--holdfast.data-dir={data}",
                               f"--server.port={http}", "--holdfast.ingest.host=127.0.0.1", f"--holdfast.ingest.port={port}",
                               "--holdfast.tls.enabled=false"], stdout=open(os.path.join(out, "server.log"), "w"),
                              stderr=subprocess.STDOUT)
    for _ in range(240):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.5)
    opts = a.agent_options.split()
    phases = [("full backup", a.image, ["backup", "--state-dir", state, "--source", a.image] + opts),
              ("incremental", a.changed, ["backup", "--state-dir", state, "--source", a.changed] + opts),
              ("restore", a.changed, ["restore", "--snapshot", "2", "--target", os.path.join(out, "restored.img")])]
    rows = []
    env = dict(os.environ, HOLDFAST_TOKEN=token)
    env.pop("JAVA_OPTS", None)
    if a.agent_launcher:
        env.update(HOLDFAST_AGENT_JAR=os.path.abspath(a.agent_jar), HOLDFAST_AGENT_CACHE=os.path.join(out, "agent-cache"))
        warm = os.path.join(out, "warmup.img")
        with open(a.image, "rb") as src, open(warm, "wb") as dst:
            dst.write(src.read(64 << 20))
        subprocess.run([a.agent_launcher, "backup", "--server", f"127.0.0.1:{port}", "--no-tls", "--volume", "warmup",
                        "--source", warm, "--state-dir", os.path.join(out, "warm-state")], env=env, check=True,
                       stdout=subprocess.DEVNULL)
    try:
        if a.warm_image:
            warm_cmd = ([a.agent_launcher] if a.agent_launcher else ["java", "-Xmx256m", "-jar", a.agent_jar])
            env.pop("JAVA_OPTS", None)
            subprocess.run(warm_cmd + ["backup", "--server", f"127.0.0.1:{port}", "--no-tls", "--volume", "warm-server",
                                       "--source", a.warm_image, "--state-dir", os.path.join(out, "warm-server-state")] + opts,
                           env=env, check=True, stdout=subprocess.DEVNULL)
        for name, volume, args in phases:
            agent_jfr = os.path.join(out, name.replace(" ", "-") + ".jfr")
            if a.agent_launcher:
                env["JAVA_OPTS"] = f"-Xmx256m {profiled(agent_jfr)}"
                cmd = [a.agent_launcher]
            else:
                cmd = ["java", "-Xmx256m", profiled(agent_jfr), "-jar", a.agent_jar]
            cmd += args[:1] + ["--server", f"127.0.0.1:{port}", "--no-tls", "--volume", "profile", "--json"] + args[1:]
            before, t0 = process_cpu(server.pid), time.time()
            agent = subprocess.Popen(cmd, env=env, stdout=open(os.path.join(out, name + ".out"), "w"), stderr=subprocess.STDOUT)
            agent_cpu = 0
            while agent.poll() is None:
                agent_cpu = max(agent_cpu, process_cpu(agent.pid) or 0)  # the last reading before exit
                time.sleep(0.02)
            t1, after = time.time(), process_cpu(server.pid)
            if agent.returncode != 0:
                sys.exit(f"{name}: agent exit {agent.returncode}, see {out}/{name}.out")
            rows.append((name, os.path.getsize(volume) / (1 << 30), t1 - t0, agent_jfr, agent_cpu, after - before, t0, t1))
    finally:
        server.terminate()
        server.wait(60)
    with open(os.path.join(out, "phases.json"), "w") as f:  # each phase's window, to cut the server's JFR by hand
        json.dump([{"phase": r[0], "GiB": r[1], "agent cpu s": r[4], "server cpu s": r[5], "start": r[6], "end": r[7]} for r in rows], f)
    if subprocess.run(["cmp", a.changed, os.path.join(out, "restored.img")]).returncode != 0:
        sys.exit("the restored image differs from the source")
    table = []
    for name, gib, wall, agent_jfr, agent_cpu, server_cpu, t0, t1 in rows:
        for who, cpu, jfr, stages, window, bg in (("agent", agent_cpu, agent_jfr, AGENT_STAGES, (None, None), ()),
                                                  ("server", server_cpu, server_jfr, SERVER_STAGES, (t0, t1), SERVER_BACKGROUND)):
            share, n = shares(jfr, stages, *window, background=bg)
            row = {"phase": name, "process": who, "GiB": round(gib, 3), "wall s": round(wall, 2), "samples": n,
                   "cpu s per GiB": round(cpu / gib, 2)}
            for stage, _ in VM_STAGES + list(bg) + stages + [("other", None)]:
                row[stage] = round(cpu * share.get(stage, 0) / gib, 2)
            table.append(row)
    if a.json:
        print(json.dumps(table, indent=1))
        return
    keys = list(dict.fromkeys(k for r in table for k in r))
    print("| " + " | ".join(keys) + " |")
    print("|" + " --- |" * len(keys))
    for r in table:
        print("| " + " | ".join(str(r.get(k, "")) for k in keys) + " |")


if __name__ == "__main__":
    main()
