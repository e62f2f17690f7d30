"""A TCP forwarder on the services host's address that can add latency to what clients send.

Hosts in other namespaces reach the services (Redis, PostgreSQL on 127.0.0.1) through it. `delay_ms`
(mean, jitter) holds each chunk a client sends for mean ± jitter ms (uniform) before it is passed on, in
order — the effect of `tc qdisc … netem delay 50ms 20ms` on the client's egress, for kernels without
`sch_netem` (this machine's: "Specified qdisc kind is unknown"), applied to exactly one service's traffic."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from contextlib import suppress

CHUNK = 65536


class DelayProxy:
    """Forwards (`bind`, `port`) → `target` in a thread of its own (an asyncio loop)."""

    port: int

    def __init__(self, bind: str, target: tuple[str, int]) -> None:
        self.bind, self.target = bind, target
        self.delay_ms: tuple[float, float] | None = None
        self.connections = 0
        self._rng = random.Random(47)
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.base_events.Server | None = None
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self._thread.start()
        ready.wait(10)
        if self._server is None:
            raise RuntimeError(f"could not listen on {bind}")
        self.port = int(self._server.sockets[0].getsockname()[1])

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._server = self._loop.run_until_complete(asyncio.start_server(self._handle, self.bind, 0))
        finally:
            ready.set()
        self._loop.run_forever()

    def _hold(self) -> float:
        if self.delay_ms is None:
            return 0.0
        mean, jitter = self.delay_ms
        return max(0.0, self._rng.uniform(mean - jitter, mean + jitter)) / 1000

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self.connections += 1
        pumps = asyncio.gather(self._pump(reader, up_writer, delayed=True),
                               self._pump(up_reader, writer, delayed=False), return_exceptions=True)
        try:
            await pumps
        except asyncio.CancelledError:
            pumps.cancel()
            with suppress(asyncio.CancelledError):
                await pumps

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, delayed: bool
    ) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def send() -> None:
            while True:
                due, data = await queue.get()
                if not data:
                    break
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()

        sender = asyncio.ensure_future(send()) if delayed else None
        last_due = 0.0
        try:
            while data := await reader.read(CHUNK):
                if sender is None:
                    writer.write(data)
                    await writer.drain()
                    continue
                last_due = max(last_due, time.monotonic() + self._hold())  # held, never reordered
                queue.put_nowait((last_due, data))
        except OSError:
            pass
        finally:
            if sender is not None:
                queue.put_nowait((0.0, b""))
                with suppress(Exception):
                    await sender
            with suppress(Exception):
                writer.close()

    def close(self) -> None:
        async def shut() -> None:
            if self._server is not None:
                self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)  # each connection's pumps end quietly

        if self._loop.is_running():
            asyncio.run_coroutine_threadsafe(shut(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
