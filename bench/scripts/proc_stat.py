"""What the profiling scripts read of processes and ports: CPU-seconds from /proc, a free loopback port."""
import os
import socket


def process_cpu(pid):
    """Seconds of CPU of process pid (utime+stime), threads that already ended included; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    fields = s[s.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
