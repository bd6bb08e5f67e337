#!/usr/bin/env python3
"""Per-process CPU, cluster-link bytes and container loads per GiB of a master/worker cluster of real processes.

For each worker count (0 is a standalone Sungem server, the baseline) starts the server jar as a
master (holdfast.cluster.role=master, holdfast.dedup.engine=cluster, cluster port on 127.0.0.2)
and N worker JVMs connecting from 127.0.0.3 on (TLS on, each worker pins the master's
certificate, one worker token made offline), then backs up every image of every workload with
the real agent twice: a first full backup, and a repeat (every image again as a new volume with
a fresh agent state, so every block is offered and looked up again). Per phase it records the
CPU-seconds of every process (utime+stime from /proc/PID/stat; the agents' from wait4), the
bytes on the cluster link (tcp_info of the master's cluster-port sockets, `ss -ti`: TLS records
as sent, heartbeats included), the workers' engine meters (holdfast_dedup_worker_*) and the
master's (holdfast_dedup_*). Every snapshot is then restored and compared byte for byte with its
image. Prints a table per GiB of logical data (image bytes) and writes everything to OUT/results.json.

The images come from the bench's own generator: --bench-jar runs
`holdfast-bench run --engines none --peers none --keep --days 1` for the workloads first
(day 0 of trace and ext4), or --workload NAME=DIR names a directory of .img files.

Usage: cluster-profile.py --server-jar S --agent-jar A --bench-jar B --out DIR [--workers 0,1,2,4]
"""
import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import time
import urllib.request

from proc_stat import free_port, process_cpu

GIB = 1 << 30


def create_token(jar, data, role, name):
    out = subprocess.run(["java", "-cp", jar, "-Dloader.main=org.holdfast.server.app.CredentialTool",
                          "org.springframework.boot.loader.launch.PropertiesLauncher", "create-token", "--data-dir", data,
                          "--name", name, "--role", role], check=True, capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1].split()[-1]


class Server:
    """One server process (standalone, master or worker) with an admin token for its HTTPS port."""

    def __init__(self, jar, home, xmx, args, label):
        self.home = home
        self.data = os.path.join(home, "data")
        os.makedirs(self.data, exist_ok=True)
        self.token = create_token(jar, self.data, "admin", "profile-admin")
        self.http = free_port()
        self.log = os.path.join(home, "server.log")
        cmd = ["java", f"-Xmx{xmx}", "-jar", jar, f"--holdfast.data-dir={self.data}", "--server.address=127.0.0.1",
               f"--server.port={self.http}", "--spring.main.banner-mode=off"] + args
        self.proc = subprocess.Popen(cmd, stdout=open(self.log, "w"), stderr=subprocess.STDOUT)
        self.label = label
        self.ctx = None

    @property
    def cert(self):
        return os.path.join(self.data, "tls", "server.crt")

    def fingerprint(self):
        with open(self.cert) as f:
            der = ssl.PEM_cert_to_DER_cert(f.read())
        return ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())

    def get(self, path):
        if self.ctx is None:
            self.ctx = ssl.create_default_context(cafile=self.cert)
        req = urllib.request.Request(f"https://127.0.0.1:{self.http}{path}", headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(req, context=self.ctx, timeout=30) as r:
            return r.read().decode()

    def await_healthy(self, timeout=240):
        deadline = time.time() + timeout
        last = "no answer"
        while time.time() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"{self.label} exited during startup, see {self.log}")
            if os.path.exists(self.cert):
                try:
                    if '"UP"' in self.get("/actuator/health"):
                        return
                except Exception as e:  # not listening yet
                    last = str(e)
            time.sleep(0.5)
        sys.exit(f"{self.label} not healthy after {timeout} s ({last}), see {self.log}")

    def metrics(self):
        """holdfast_* samples of /actuator/prometheus, name with labels -> value."""
        m = {}
        for line in self.get("/actuator/prometheus").splitlines():
            if line.startswith("holdfast_"):
                k, _, v = line.rpartition(" ")
                try:
                    m[k] = float(v)
                except ValueError:
                    pass
        return m

    def cpu(self):
        return process_cpu(self.proc.pid)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def link_bytes(port):
    """(bytes the master sent, bytes it received) on its established cluster-port sockets (tcp_info)."""
    out = subprocess.run(["ss", "-tinH", "state", "established", f"( sport = :{port} )"], check=True, capture_output=True,
                         text=True).stdout
    sent = sum(int(x) for x in re.findall(r"bytes_acked:(\d+)", out))
    received = sum(int(x) for x in re.findall(r"bytes_received:(\d+)", out))
    return sent, received


def metric(m, name):
    return sum(v for k, v in m.items() if k == name or k.startswith(name + "{"))


class Cluster:
    """A standalone server (workers == 0) or a master and its worker processes."""

    def __init__(self, a, workers, home):
        self.workers = []
        self.cluster_port = free_port()
        self.ingest = free_port()
        engine = [f"--holdfast.dedup.sungem.{k}" for k in a.sungem]
        master_dir = os.path.join(home, "master" if workers else "standalone")
        os.makedirs(os.path.join(master_dir, "data"), exist_ok=True)
        self.agent_token = create_token(a.server_jar, os.path.join(master_dir, "data"), "agent", "profile-agent")
        args = ["--holdfast.ingest.host=127.0.0.1", f"--holdfast.ingest.port={self.ingest}"] + engine
        if workers:
            worker_token = create_token(a.server_jar, os.path.join(master_dir, "data"), "worker", "profile-workers")
            args += ["--holdfast.cluster.role=master", "--holdfast.cluster.host=127.0.0.2",
                     f"--holdfast.cluster.port={self.cluster_port}", "--holdfast.dedup.engine=cluster"]
            if a.broadcast:
                args += [f"--holdfast.dedup.cluster.broadcast={a.broadcast}"]
        else:
            args += ["--holdfast.dedup.engine=sungem"]
        self.master = Server(a.server_jar, master_dir, a.master_xmx, args, "master" if workers else "standalone")
        self.master.await_healthy()
        if not workers:
            return
        token_file = os.path.join(home, "worker.token")
        with open(token_file, "w") as f:
            f.write(worker_token + "\n")
        os.chmod(token_file, 0o600)
        for i in range(workers):
            self.workers.append(Server(a.server_jar, os.path.join(home, f"worker-{i + 1}"), a.worker_xmx, [
                f"--holdfast.ingest.port={free_port()}", "--holdfast.cluster.role=worker", f"--holdfast.cluster.host=127.0.0.{3 + i}",
                f"--holdfast.cluster.master=127.0.0.2:{self.cluster_port}",
                f"--holdfast.cluster.master-fingerprint={self.master.fingerprint()}", f"--holdfast.cluster.token-file={token_file}",
                f"--holdfast.store.s3.node=worker-{i + 1}"] + engine, f"worker-{i + 1}"))
        for w in self.workers:
            w.await_healthy()
        deadline = time.time() + 120
        while time.time() < deadline:
            listed = json.loads(self.master.get("/api/v1/cluster/workers"))
            if len(listed) == workers and all(w["state"] == "up" for w in listed):
                return
            time.sleep(0.5)
        sys.exit(f"workers not all up after 120 s: {listed}")

    def processes(self):
        return [self.master] + self.workers

    def sample(self):
        """Everything a phase is the difference of."""
        s = {"cpu": [p.cpu() for p in self.processes()], "metrics": [p.metrics() for p in self.processes()]}
        s["link"] = link_bytes(self.cluster_port) if self.workers else (0, 0)
        return s

    def stop(self):
        for p in reversed(self.processes()):
            p.stop()


def agent(a, c, args, log):
    # a private home: the known-servers file is the run's own, and no resident agent of the user takes the work
    home = os.path.join(os.path.dirname(log), "agent-home")
    env = dict(os.environ, HOLDFAST_TOKEN=c.agent_token, HOME=home)
    for k in ("JAVA_OPTS", "XDG_STATE_HOME", "HOLDFAST_AGENT_SOCKET"):
        env.pop(k, None)
    cmd = ["java", f"-Xmx{a.agent_xmx}", f"-Duser.home={home}", "-jar", a.agent_jar] + args[:1] + [
        "--server", f"127.0.0.1:{c.ingest}", "--fingerprint", c.master.fingerprint(), "--json", "--no-daemon"] + args[1:]
    with open(log, "w") as out:
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=out, text=True)
        stdout = p.stdout.read()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    with open(log, "a") as out:
        out.write(stdout)
    if p.returncode != 0:
        sys.exit(f"agent {' '.join(args[:3])} exited {p.returncode}, see {log}")
    return json.loads(stdout[stdout.index("{"):]), ru.ru_utime + ru.ru_stime


def phase(a, c, name, images, state, home):
    """Backs up every image (volume name -> path) with a fresh state directory; returns the phase's figures."""
    before, t0 = c.sample(), time.time()
    agent_cpu, new_blocks, snapshots = 0.0, 0, {}
    for volume, image in images.items():
        summary, cpu = agent(a, c, ["backup", "--volume", volume, "--source", image, "--state-dir",
                                    os.path.join(state, volume)], os.path.join(home, f"{name}-{volume}.log"))
        agent_cpu += cpu
        new_blocks += summary.get("newBlocks", 0)
        snapshots[volume] = summary.get("snapshotId")
    wall, after = time.time() - t0, c.sample()
    gib = sum(os.path.getsize(p) for p in images.values()) / GIB
    r = {"phase": name, "GiB": gib, "wall s": wall, "agent cpu s": agent_cpu, "new blocks": new_blocks, "snapshots": snapshots,
         "cpu s": [x - y for x, y in zip(after["cpu"], before["cpu"])],
         "link to workers bytes": after["link"][0] - before["link"][0],
         "link from workers bytes": after["link"][1] - before["link"][1]}
    diff = [{k: v - b.get(k, 0) for k, v in m.items()} for m, b in zip(after["metrics"], before["metrics"])]
    r["master fingerprints"] = metric(diff[0], "holdfast_dedup_fingerprints_total")
    r["master duplicates"] = metric(diff[0], "holdfast_dedup_duplicates_total")
    r["master engine s"] = metric(diff[0], "holdfast_dedup_engine_seconds_total")
    if c.workers:
        r["worker lookups"] = [metric(d, "holdfast_dedup_worker_lookups_total") for d in diff[1:]]
        r["worker containers loaded"] = [metric(d, "holdfast_dedup_worker_containers_loaded_total") for d in diff[1:]]
        r["worker engine s"] = [metric(d, "holdfast_dedup_worker_seconds_total") for d in diff[1:]]
    else:
        r["containers loaded"] = metric(diff[0], "holdfast_dedup_containers_loaded_total")
    return r


def warm_up(a, c, home):
    """Two backups of 64 MiB of random data (new blocks, then the same again as duplicates), unmeasured: the servers'
    JIT and the workers' engines (opened at the master's first call) are warm before any phase. Random bytes of
    their own, so that the workloads find nothing of them in the index."""
    image = os.path.join(home, "warm-up.img")
    with open(image, "wb") as f:
        f.write(os.urandom(64 << 20))
    for v in ("warm-up", "warm-up-again"):
        agent(a, c, ["backup", "--volume", v, "--source", image, "--state-dir", os.path.join(home, "warm-up-state", v)],
              os.path.join(home, f"{v}.log"))
    os.remove(image)


def restores(a, c, images, phases, home):
    """Restores every snapshot of the phases and compares it with its image; returns (identical, total)."""
    ok = n = 0
    target = os.path.join(home, "restored.img")
    for p in phases:
        for volume, snap in p["snapshots"].items():
            if os.path.exists(target):
                os.remove(target)
            agent(a, c, ["restore", "--volume", volume, "--snapshot", str(snap), "--target", target],
                  os.path.join(home, f"restore-{volume}.log"))
            source = images[volume.removesuffix("-repeat")]
            same = subprocess.run(["cmp", "-s", source, target]).returncode == 0
            ok += same
            n += 1
            if not same:
                print(f"cluster-profile: restore of {volume} snapshot {snap} DIFFERS from {source}", file=sys.stderr)
    if os.path.exists(target):
        os.remove(target)
    return ok, n


def rows(results):
    """The table: one row per workload, phase and worker count, per GiB of logical data."""
    out = []
    for r in results:
        g = r["GiB"]
        n = r["workers"]
        row = {"workload": r["workload"], "phase": r["phase"], "workers": n or "standalone",
               "agent s": round(r["wall s"], 1), "GiB looked up": round(r["master fingerprints"] * 4096 / GIB, 2),
               "new blocks": r["new blocks"],
               "agent CPU s/GiB": round(r["agent cpu s"] / g, 2),
               "master CPU s/GiB": round(r["cpu s"][0] / g, 2)}
        if n:
            w = [x / g for x in r["cpu s"][1:]]
            row["worker CPU s/GiB (min-max)"] = f"{min(w):.2f}-{max(w):.2f}"
            row["workers' CPU s/GiB (sum)"] = round(sum(w), 2)
            e = [x / g for x in r["worker engine s"]]
            row["worker engine s/GiB (min-max)"] = f"{min(e):.2f}-{max(e):.2f}"
            row["lookups/GiB per worker"] = round(max(r["worker lookups"]) / g)
            row["link MiB/GiB out-in"] = f"{r['link to workers bytes'] / g / (1 << 20):.1f}-{r['link from workers bytes'] / g / (1 << 20):.1f}"
            loads = r["worker containers loaded"]
            row["containers loaded/GiB"] = round(sum(loads) / g, 1)
            row["containers loaded/GiB, busiest worker"] = round(max(loads) / g, 1)
        else:
            row["engine s/GiB"] = round(r["master engine s"] / g, 2)
            row["containers loaded/GiB"] = round(r["containers loaded"] / g, 1)
        row["restores identical"] = f"{r['restores identical']}/{r['restores']}"
        out.append(row)
    return out


def model(results, t_ios=(0.010, 0.0), link_bytes_per_s=10e9 / 8):
    """Speedup per GiB as in docs/benchmarks.md "Throughput against worker count: the model", from process figures:
    standalone takes its engine time plus its container loads at t_io; each worker its process CPU (or, as the
    in-process model, its engine time) plus its own loads at t_io; the master what it spends beyond a standalone
    server's ingest (its CPU less the standalone server's non-engine CPU on the same phase); the link its busier
    direction at 10 Gbit/s. The slowest of them sets the cluster's time. Also the cluster against one worker
    process: process CPU only."""
    base = {(r["workload"], r["phase"]): r for r in results if not r["workers"]}
    one = {(r["workload"], r["phase"]): r for r in results if r["workers"] == 1}

    def master_and_link(r, b):
        master = max(0.0, r["cpu s"][0] / r["GiB"] - (b["cpu s"][0] - b["master engine s"]) / b["GiB"])
        return master, max(r["link to workers bytes"], r["link from workers bytes"]) / r["GiB"] / link_bytes_per_s

    def nodes(r, t, cost="cpu s"):
        own = r[cost][1:] if cost == "cpu s" else r[cost]
        return [(c + x * t) / r["GiB"] for c, x in zip(own, r["worker containers loaded"])]

    def cluster_time(r, b, t, cost="cpu s"):
        return max(nodes(r, t, cost) + list(master_and_link(r, b)))

    out = []
    for r in results:
        key = (r["workload"], r["phase"])
        b = base.get(key)
        if not r["workers"] or b is None:
            continue
        master, link = master_and_link(r, b)
        row = {"workload": r["workload"], "phase": r["phase"], "workers": r["workers"],
               "master dedup s/GiB": round(master, 2), "link s/GiB": round(link, 3)}
        for t in t_ios:
            ms = f"t_io {t * 1000:g} ms"
            standalone = (b["master engine s"] + b["containers loaded"] * t) / b["GiB"]
            slowest = cluster_time(r, b, t)
            row[f"slowest worker s/GiB, {ms}"] = round(max(nodes(r, t)), 2)
            row[f"speedup, {ms}"] = round(standalone / slowest, 2) if slowest > 0 else "-"
            engine = cluster_time(r, b, t, "worker engine s")
            row[f"speedup from engine time, {ms}"] = round(standalone / engine, 2) if engine > 0 else "-"
            o = one.get(key)
            row[f"speedup vs 1 worker, {ms}"] = round(cluster_time(o, b, t) / slowest, 2) if o and slowest > 0 else "-"
        out.append(row)
    return out


def markdown(table):
    keys = list(dict.fromkeys(k for r in table for k in r))
    # the check of every row last, after the columns only standalone or only cluster rows have
    keys = [k for k in keys if k != "restores identical"] + [k for k in keys if k == "restores identical"]
    lines = ["| " + " | ".join(keys) + " |", "|" + " --- |" * len(keys)]
    lines += ["| " + " | ".join(str(r.get(k, "-")) for k in keys) + " |" for r in table]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server-jar")
    ap.add_argument("--agent-jar")
    ap.add_argument("--bench-jar", help="holdfast-bench exec jar: generate day 0 of --workloads with it")
    ap.add_argument("--workloads", default="trace,ext4", help="with --bench-jar: the bench's workloads to generate")
    ap.add_argument("--bench-options", default="", help="with --bench-jar: more options of `run`, e.g. '--quick' or '--seed 7'")
    ap.add_argument("--workload", action="append", default=[], help="NAME=DIR: back up DIR/*.img instead of generating")
    ap.add_argument("--workers", default="0,1,2,4", help="worker counts; 0 is a standalone Sungem server (the baseline)")
    ap.add_argument("--sungem", action="append", default=None,
                    help="a holdfast.dedup.sungem.* setting of every server, KEY=VALUE (default container-cache-size=4MB)")
    ap.add_argument("--broadcast", choices=["two-phase", "full"],
                    help="the master's holdfast.dedup.cluster.broadcast (default: the server's, two-phase)")
    ap.add_argument("--master-xmx", default="1g")
    ap.add_argument("--worker-xmx", default="512m")
    ap.add_argument("--agent-xmx", default="512m")
    ap.add_argument("--out")
    ap.add_argument("--tables", help="only print the tables of an earlier run's results.json")
    a = ap.parse_args()
    if a.tables:
        with open(a.tables) as f:
            results = json.load(f)
        print(markdown(sorted(rows(results), key=lambda r: (r["workload"], r["phase"]))))
        print()
        print(markdown(sorted(model(results), key=lambda r: (r["workload"], r["phase"]))))
        return
    if not (a.server_jar and a.agent_jar and a.out):
        ap.error("--server-jar, --agent-jar and --out are needed (or --tables)")
    a.sungem = a.sungem or ["container-cache-size=4MB"]
    a.server_jar, a.agent_jar = os.path.abspath(a.server_jar), os.path.abspath(a.agent_jar)
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    workloads = dict(w.split("=", 1) for w in a.workload)
    if a.bench_jar:
        gen = os.path.join(out, "gen")
        subprocess.run(["java", "-jar", a.bench_jar, "run", "--workload", a.workloads, "--engines", "none", "--peers", "none",
                        "--keep", "--days", "1", "--out", gen] + a.bench_options.split(), check=True, stdout=subprocess.DEVNULL)
        for w in a.workloads.split(","):
            workloads[w] = os.path.join(gen, w, "images")
    if not workloads:
        sys.exit("give --bench-jar or --workload NAME=DIR")
    images = {w: {f"{w}-{os.path.basename(p)[:-4]}": p for p in sorted(glob.glob(os.path.join(d, "*.img")))}
              for w, d in workloads.items()}
    results = []
    for n in [int(x) for x in a.workers.split(",")]:
        home = os.path.join(out, f"workers-{n}")
        shutil.rmtree(home, ignore_errors=True)
        os.makedirs(home)
        print(f"cluster-profile: {n or 'standalone'}: starting", flush=True)
        c = Cluster(a, n, home)
        try:
            warm_up(a, c, home)
            for w, imgs in images.items():
                first = phase(a, c, "first", imgs, os.path.join(home, w, "state-1"), home)
                repeat = phase(a, c, "repeat", {v + "-repeat": p for v, p in imgs.items()}, os.path.join(home, w, "state-2"), home)
                ok, total = restores(a, c, imgs, [first, repeat], home)
                for p in (first, repeat):
                    p.update(workload=w, workers=n, **{"restores identical": ok, "restores": total})
                    results.append(p)
                print(f"cluster-profile: {n or 'standalone'} {w}: first {first['wall s']:.1f} s, repeat {repeat['wall s']:.1f} s,"
                      f" restores identical {ok}/{total}", flush=True)
                with open(os.path.join(out, "results.json"), "w") as f:
                    json.dump(results, f, indent=1)
        finally:
            c.stop()
            for d in glob.glob(os.path.join(home, "*", "data")):
                shutil.rmtree(d, ignore_errors=True)
    table = sorted(rows(results), key=lambda r: (r["workload"], r["phase"]))
    print(markdown(table))
    print()
    print(markdown(sorted(model(results), key=lambda r: (r["workload"], r["phase"]))))
    if any(r["restores identical"] < r["restores"] for r in results):
        sys.exit("a restore differed from its image")


if __name__ == "__main__":
    main()
