"""Prometheus metrics, kept in the worker process (SimpleWorker runs jobs in it, so the
counts outlive each job) and served as text on /metrics by a small HTTP thread, beside
/healthz (the work loop is alive) and /readyz (and it reached Redis lately), the probes
deploy/ points Docker and Kubernetes at."""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class Metrics:
    """Counters and one latency histogram; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counters = {
            "anchor_jobs_done_total": 0,
            "anchor_jobs_failed_total": 0,
            "anchor_jobs_retried_total": 0,
            "anchor_jobs_invalid_total": 0,
            "anchor_jobs_refused_total": 0,
            "anchor_redis_errors_total": 0,
            "anchor_positions_analysed_total": 0,
            "anchor_plays_generated_total": 0,
        }
        self.buckets = [0] * (len(LATENCY_BUCKETS) + 1)
        self.latency_sum = 0.0
        self.latency_count = 0

    def inc(self, name: str, amount: int = 1) -> None:
        with self._lock:
            self.counters[name] += amount

    def observe(self, seconds: float) -> None:
        with self._lock:
            self.buckets[bisect_left(LATENCY_BUCKETS, seconds)] += 1
            self.latency_sum += seconds
            self.latency_count += 1

    def render(self) -> str:
        """The Prometheus text exposition format."""
        with self._lock:
            lines = []
            for name, value in self.counters.items():
                lines += [f"# TYPE {name} counter", f"{name} {value}"]
            name = "anchor_analysis_seconds"
            lines.append(f"# TYPE {name} histogram")
            running = 0
            for bound, count in zip(LATENCY_BUCKETS, self.buckets, strict=False):
                running += count
                lines.append(f'{name}_bucket{{le="{bound}"}} {running}')
            lines.append(f'{name}_bucket{{le="+Inf"}} {self.latency_count}')
            lines.append(f"{name}_sum {self.latency_sum:.6f}")
            lines.append(f"{name}_count {self.latency_count}")
            return "\n".join(lines) + "\n"


METRICS = Metrics()


class Health:
    """When the work loop last showed life, and last heard from Redis (monotonic)."""

    LIVE_WITHIN = 120.0  # the loop wakes every maintenance interval or heartbeat
    READY_WITHIN = 30.0

    def __init__(self) -> None:
        self.alive_at = self.redis_at = None

    def beat(self, redis_ok: bool) -> None:
        self.alive_at = time.monotonic()
        if redis_ok:
            self.redis_at = self.alive_at

    def live(self) -> bool:
        return self.alive_at is not None and time.monotonic() - self.alive_at < self.LIVE_WITHIN

    def ready(self) -> bool:
        return self.redis_at is not None and time.monotonic() - self.redis_at < self.READY_WITHIN


HEALTH = Health()


def serve(metrics: Metrics, host: str, port: int, health: Health = HEALTH) -> ThreadingHTTPServer:
    """Serve /metrics, /healthz and /readyz on a daemon thread; returns the server (port 0
    picks a free one)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            path = self.path.split("?")[0]
            if path in ("/healthz", "/readyz"):
                ok = health.live() if path == "/healthz" else health.live() and health.ready()
                self.send_response(200 if ok else 503)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"ok\n" if ok else b"not ok\n")
                return
            if path != "/metrics":
                self.send_error(404)
                return
            body = metrics.render().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True, name="metrics").start()
    return server
