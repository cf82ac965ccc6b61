"""Launch moto's server for cronfence's local runs and tests.

Usage: python serve.py [--host 127.0.0.1] [--port 0] [--exit-on-stdin-eof]

Prints exactly one line to stdout once the socket is bound:
    {"ready": true, "port": N, "endpoint": "http://127.0.0.1:N"}
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
from typing import Any, Callable, Iterable


# How long a DynamoDB request may wait for its turn before it is refused as
# throttled. Under the engine's 3 s client timeout: a request served after that
# would answer a client that already gave up (and sent it again).
MAX_WAIT_SECONDS = 2.5

THROTTLED_BODY = json.dumps(
    {
        "__type": "com.amazonaws.dynamodb.v20120810#ThrottlingException",
        "message": "the emulator is busy: this request waited its turn longer than a client waits (serve.py)",
    }
).encode()


def _serialise_dynamodb(
    app: Callable[..., Iterable[bytes]], max_wait_seconds: float = MAX_WAIT_SECONDS
) -> Callable[..., Iterable[bytes]]:
    # moto serves each request on its own thread and takes no per-item lock, so
    # two conditional writes on one item can both pass their condition
    # (measured: in 1 round in 300, 2 of 32 racing conditional UpdateItems on
    # one item both succeeded; 4 rounds in 300 in a later unlocked run of
    # scripts/race-check.ts). Real DynamoDB is atomic per item, so we run
    # DynamoDB requests one at a time. SQS and the rest stay concurrent: an SQS
    # long poll must never hold up DynamoDB.
    #
    # A request that cannot get its turn within max_wait_seconds is refused
    # with DynamoDB's ThrottlingException (retryable; nothing applied), as a
    # table over its capacity refuses it. Unbounded, the queue collapsed under
    # a 300 s chaos drill: clients timed out and sent again while every request
    # they had given up on still waited for its turn; 8,573 threads were
    # waiting in this process, and the drill's own requests got no answer in
    # 5 tries of 10 s (2026-12-02).
    lock = threading.Lock()

    def wrapped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if not environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB"):
            return app(environ, start_response)
        if not lock.acquire(timeout=max_wait_seconds):
            start_response(
                "400 Bad Request",
                [
                    ("Content-Type", "application/x-amz-json-1.0"),
                    ("Content-Length", str(len(THROTTLED_BODY))),
                    ("x-amzn-ErrorType", "ThrottlingException"),
                ],
            )
            return [THROTTLED_BODY]
        try:
            result = app(environ, start_response)
            try:
                return list(result)  # materialise the body inside the lock
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
        finally:
            lock.release()

    return wrapped


def _wake_long_polls_for_delayed_messages() -> None:
    # moto's long poll sleeps on a condition that only a *new* message wakes,
    # rechecking once a second; a message whose DelaySeconds (or visibility
    # timeout) runs out is seen up to 1 s late. Real SQS returns it at once.
    # Measured with `cronfence dev`: start lags drifted across 0..1000 ms
    # before this. The replacement sleeps until the soonest such moment
    # (one pass over the queue per wake, not a busy poll: the chaos drill
    # keeps a thousand delayed messages queued).
    import time

    from moto.sqs.models import Queue

    def wait_for_messages(self: Any, timeout: int) -> None:
        deadline = time.monotonic() + timeout
        with self._messages_lock:
            while True:
                now_ms = time.time() * 1000.0
                soonest = None
                for message in self._messages:
                    ready_at = max(message.visible_at, message.delayed_until)
                    if ready_at < now_ms:
                        return
                    if soonest is None or ready_at < soonest:
                        soonest = ready_at
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                wait = remaining if soonest is None else min(remaining, (soonest - now_ms) / 1000 + 0.002)
                self._messages_lock.wait(timeout=max(wait, 0.001))

    Queue.wait_for_messages = wait_for_messages


def _atomic_sqs_queues() -> None:
    # moto's SQS takes no lock while it reads and changes a queue's messages
    # (only its send appends under the queue's condition). A receive checks
    # that a message is visible and then marks it received: two long polls
    # woken by one message can both take it (a CI drill, 2026-12-03: a second
    # worker claimed a slice as the holder's message back, 52 ms into the
    # holder's lease). A delete rebuilds the message list
    # from a copy, losing a message sent meanwhile, and a receive can fail on
    # "Set changed size during iteration". Real SQS hides a received message
    # from other receivers, so each receive pass, delete and visibility change
    # runs under the queue's condition, one at a time per queue; the long
    # poll's wait between passes does not hold it.
    import time

    from moto.sqs.models import SQSBackend

    receive = SQSBackend.receive_message

    def receive_message(
        self: Any,
        queue_name: str,
        count: int,
        wait_seconds_timeout: int,
        visibility_timeout: int,
        message_attribute_names: list[str] | None = None,
    ) -> Any:
        queue = self.get_queue(queue_name)
        deadline = time.monotonic() + wait_seconds_timeout
        while True:
            with queue._messages_lock:
                # A wait of 0: one pass over the queue, no sleeping inside the lock.
                result = receive(self, queue_name, count, 0, visibility_timeout, message_attribute_names)
            remaining = deadline - time.monotonic()
            if result or remaining <= 0:
                return result
            queue.wait_for_messages(remaining)

    SQSBackend.receive_message = receive_message  # type: ignore[method-assign]

    def under_queue_lock(original: Callable[..., Any]) -> Callable[..., Any]:
        def locked(self: Any, queue_name: str, *args: Any, **kwargs: Any) -> Any:
            with self.get_queue(queue_name)._messages_lock:
                return original(self, queue_name, *args, **kwargs)

        return locked

    # The batch forms call these once per entry.
    SQSBackend.delete_message = under_queue_lock(SQSBackend.delete_message)  # type: ignore[method-assign]
    SQSBackend.change_message_visibility = under_queue_lock(SQSBackend.change_message_visibility)  # type: ignore[method-assign]


def _cheap_sqs_clock() -> None:
    # moto's SQS reads the time through datetime arithmetic (about 14 us a
    # call) for every message on every visibility check, and SendMessage
    # computes the queue's message counts, so a send cost O(queue length)
    # of those: 400 ms per SendMessageBatch with 1,000 delayed messages
    # queued (measured with cProfile). The same instant from time.time().
    import time

    from moto.sqs import models

    from moto.core.utils import unix_time_millis as original

    def unix_time_millis(dt: Any = None) -> float:
        return time.time() * 1000.0 if dt is None else original(dt)

    models.unix_time_millis = unix_time_millis


def _cheap_retention_check() -> None:
    # moto checks each message a receive hands out against the queue's
    # retention period by building all of the queue's attributes, three
    # times over (get_queue_attributes), and three of those attributes are
    # message counts, each a pass over the queue: O(queue length) per
    # message received. Measured in-process with 1,000 messages queued:
    # 899 ms per ReceiveMessage of 10 (21 ms with this), while a 1,000-slice
    # burst waited on the queue. The same test, from the attribute itself.
    from moto.core.utils import unix_time
    from moto.sqs.models import SQSBackend

    def is_message_valid_based_on_retention_period(self: Any, queue_name: str, message: Any) -> bool:
        queue = self.get_queue(queue_name)
        return bool(queue.message_retention_period + message.sent_timestamp / 1000 > unix_time())

    SQSBackend.is_message_valid_based_on_retention_period = is_message_valid_based_on_retention_period


def _item_level_transaction_rollback() -> None:
    # moto's TransactWriteItems deep-copies every table it touches, to roll
    # back on failure: each transaction costs O(table size). With a few
    # thousand slices that was most of the emulator's time (py-spy), and
    # scans slowed until their messages timed out. Snapshot only the items
    # the transaction names, and restore those on failure; same semantics.
    import copy

    import moto.dynamodb.models as dynamodb_models
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table

    class _SkipTableCopies:
        @staticmethod
        def deepcopy(value: Any, memo: Any = None) -> Any:
            return value if isinstance(value, Table) else copy.deepcopy(value, memo)

    original = DynamoDBBackend.transact_write_items

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        snapshots = []
        for entry in transact_items:
            try:
                op_type, op = next(iter(entry.items()))
                table = self.tables[op["TableName"]]
                key = op["Key"] if op_type != "Put" else {
                    name: op["Item"][name] for name in (table.hash_key_attr, table.range_key_attr) if name is not None
                }
                hash_key, range_key = self.get_keys_value(table, key)
                snapshots.append((table, hash_key, range_key, copy.deepcopy(table.get_item(hash_key, range_key))))
            except Exception:
                continue  # malformed entries are reported by moto's own validation
        dynamodb_models.copy = _SkipTableCopies  # type: ignore[assignment]
        try:
            return original(self, transact_items)
        except Exception:
            for table, hash_key, range_key, item in reversed(snapshots):
                if item is None:
                    table.delete_item(hash_key, range_key)
                elif range_key is not None:
                    table.items[hash_key][range_key] = item
                else:
                    table.items[hash_key] = item
            raise
        finally:
            dynamodb_models.copy = copy

    DynamoDBBackend.transact_write_items = transact_write_items


def _cache_service_list() -> None:
    # moto's dispatcher maps each request to a service under one global lock,
    # and inside that lock lists its own package directory (a listdir and
    # ~150 isdir calls, each giving up the GIL). In a stalled chaos drill
    # py-spy found ~50 threads (SQS ones too) queued on that lock, one of them
    # the DynamoDB request that ~470 others waited behind. With 64
    # clients the cache made no measurable difference (the case it is for,
    # hundreds of threads fighting for the GIL, was not measured apart from
    # the other fixes). The list never changes.
    from moto import backends

    modules = tuple(backends.list_of_moto_modules())
    backends.list_of_moto_modules = lambda: modules  # type: ignore[assignment]


def _direct_item_responses() -> None:
    # moto 5.2 writes every response through a generic serializer driven by
    # botocore's models (moto/core/serialize.py), which walks the shape of each
    # attribute value of each item. For DynamoDB's item actions (JSON 1.0, item
    # attributes already in wire form in the handler's dict) its output is that
    # dict as JSON, and the walk was half of the emulator's DynamoDB time in a
    # chaos drill that stalled on a 2-core machine (py-spy, 2026-12-01). Those
    # results are written with json.dumps; errors, other actions, and anything
    # json cannot write go through moto's serializer as before.
    from moto.dynamodb.responses import DynamoHandler

    direct = {
        "GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan",
        "BatchGetItem", "BatchWriteItem", "TransactWriteItems", "TransactGetItems",
    }
    original = DynamoHandler.serialized
    # Top-level members of each action's output shape: moto's serializer leaves out the rest (DeleteItem's
    # ConsumedCapacityUnits, say), and so does this.
    members: dict[str, frozenset[str]] = {}

    def output_members(self: Any, action: str) -> frozenset[str]:
        if action not in members:
            from moto.core.responses import get_service_model

            shape = get_service_model(self.boto3_service_name).operation_model(action).output_shape
            members[action] = frozenset(shape.members) if shape is not None else frozenset()
        return members[action]

    def serialized(self: Any, action_result: Any) -> Any:
        result = action_result.result
        action = self._get_action()
        if isinstance(result, dict) and action in direct:
            known = output_members(self, action)
            try:
                body = json.dumps({key: value for key, value in result.items() if key in known}, separators=(",", ":"))
            except (TypeError, ValueError):
                return original(self, action_result)
            headers = {"Content-Type": "application/x-amz-json-1.0"}
            headers.update(self.response_headers)
            return 200, headers, body
        return original(self, action_result)

    DynamoHandler.serialized = serialized  # type: ignore[method-assign]


def _partition_queries() -> None:
    # moto answers a Query on a table (no index) by sorting every item of the
    # table and then keeping the partition asked for: O(table) per Query.
    # The wheel's bucket queries went from milliseconds at 2,000 jobs to a
    # second at 30,000 and past the SDK's 3 s timeout at 100,000 (the
    # benchmark's density level scanned nothing). DynamoDB reads only the
    # partition: hand moto's query just that partition's items; the rest of
    # its query (sort, range condition, filter, paging) is unchanged.
    #
    # Within the partition moto still sorts every item and tests each against
    # the sort key condition: O(partition) per Query. At 1,000,000 schedules a
    # shard's wheel partition holds about 16,000 packs, and a scan's bucket
    # queries took 9.8 s a shard (the density level's scans timed out,
    # 2026-12-05). DynamoDB reads only the key range: keep each queried
    # partition's sort keys sorted (a key added or removed goes in or out at
    # its place, as a scan's new packs do between its bucket queries) and hand
    # moto just the items whose key the condition can hold.
    import bisect

    from moto.dynamodb.models.table import Table

    original = Table.query

    def query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = kwargs.get("index_name", args[6] if len(args) > 6 else None)
        if index_name is not None or hash_key is None or not self.range_key_attr:
            return original(self, hash_key, *args, **kwargs)
        range_comparison = kwargs.get("range_comparison", args[0] if args else None)
        range_objs = kwargs.get("range_objs", args[1] if len(args) > 1 else [])
        if hash_key not in self.items:
            candidates: list[Any] = []
        else:
            partition = self.items[hash_key]
            if not isinstance(partition, _SortedPartition):
                partition = self.items[hash_key] = _SortedPartition(partition)
            candidates = partition.within(range_comparison, [obj.cast_value for obj in range_objs])
        self.all_items = lambda: candidates  # one DynamoDB request at a time: this instance is ours until it returns
        try:
            return original(self, hash_key, *args, **kwargs)
        finally:
            del self.all_items

    class _SortedPartition(dict):  # type: ignore[type-arg]
        """A partition's items by sort key, with its keys kept sorted for range queries."""

        def __init__(self, items: dict[Any, Any]) -> None:
            super().__init__(items)
            keys = sorted(self, key=lambda key: key.cast_value)
            self._values = [key.cast_value for key in keys]
            self._keys = keys

        # Every way moto adds or removes a key keeps the sorted keys in step; replacing an item leaves them.
        def __setitem__(self, key: Any, value: Any) -> None:
            if key not in self:
                at = bisect.bisect_right(self._values, key.cast_value)
                self._values.insert(at, key.cast_value)
                self._keys.insert(at, key)
            super().__setitem__(key, value)

        def __delitem__(self, key: Any) -> None:
            self._forget(key)
            super().__delitem__(key)

        def pop(self, key: Any, *default: Any) -> Any:
            self._forget(key)
            return super().pop(key, *default)

        def _forget(self, key: Any) -> None:
            if key in self:  # the first key from its value's place that is it (two number keys can share a value)
                at = self._keys.index(key, bisect.bisect_left(self._values, key.cast_value))
                del self._values[at], self._keys[at]

        def __reduce_ex__(self, protocol: Any) -> Any:
            return (dict, (dict(self),))  # a copy (a backup's) is a plain partition, sorted again when queried

        def popitem(self) -> Any:
            raise NotImplementedError("moto does not pop a partition's items in any order")

        def clear(self) -> None:
            raise NotImplementedError("moto does not clear a partition")

        def update(self, *args: Any, **kwargs: Any) -> None:
            raise NotImplementedError("moto does not update a partition at once")

        def setdefault(self, *args: Any) -> Any:
            raise NotImplementedError("moto does not setdefault a partition's item")

        def within(self, comparison: str | None, bounds: list[Any]) -> list[Any]:
            """The items whose sort key `comparison` can hold (all of them when it is not a range moto orders)."""
            values, keys = self._values, self._keys
            try:
                span = _span(values, (comparison or "").upper(), bounds)
            except TypeError:  # a bound of another type than the keys: moto's own comparison decides
                span = None
            if span is None or span[0] > span[1]:
                return list(self.values())
            # With a key on each side of the range, moto's loop ends a Limit-ed page as it would over the partition:
            # with a LastEvaluatedKey when an item follows the last one returned.
            return [self[key] for key in keys[max(0, span[0] - 1) : span[1] + 1]]

    def _span(values: list[Any], comparison: str, bounds: list[Any]) -> tuple[int, int] | None:
        """Where in the sorted `values` a sort key condition can hold: [from, to)."""
        if not bounds:
            return None
        low, high = bisect.bisect_left, bisect.bisect_right
        first = bounds[0]
        if comparison in ("=", "EQ"):
            return low(values, first), high(values, first)
        if comparison in ("<", "LT"):
            return 0, low(values, first)
        if comparison in ("<=", "LE"):
            return 0, high(values, first)
        if comparison in (">", "GT"):
            return high(values, first), len(values)
        if comparison in (">=", "GE"):
            return low(values, first), len(values)
        if comparison == "BETWEEN" and len(bounds) == 2:
            return low(values, first), high(values, bounds[1])
        if comparison == "BEGINS_WITH" and isinstance(first, str):
            start = end = low(values, first)
            while end < len(values) and values[end].startswith(first):
                end += 1
            return start, end
        return None

    Table.query = query


def _freeze_survivors_of_full_collections() -> None:
    # A million schedules in moto's tables are tens of millions of Python
    # objects, and each full (generation 2) collection of the cyclic garbage
    # collector walked them all while every request waited: about 0.8 s at
    # 300,000 items here, longer as the table grew, so the bench's
    # 1,000,000-schedule registration timed out (3 s, three tries). What
    # survives a full collection is long-lived table data: freeze it, so the
    # next full collection walks only what came since. (A cycle among frozen
    # objects that later becomes garbage is never collected: a small leak in
    # a process that lives for one test run.)
    import gc

    def freeze_after_full_collection(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info.get("generation") == 2:
            gc.freeze()

    gc.callbacks.append(freeze_after_full_collection)


def _patch_moto() -> None:
    """moto as the engine needs it: each patch above says what it fixes."""
    _wake_long_polls_for_delayed_messages()
    _atomic_sqs_queues()
    _cheap_sqs_clock()
    _cheap_retention_check()
    _item_level_transaction_rollback()
    _partition_queries()
    _cache_service_list()
    _direct_item_responses()
    _freeze_survivors_of_full_collections()


def _watch_stdin(on_eof: Callable[[], None]) -> None:
    # os.read on the raw fd, not sys.stdin: a daemon thread blocked inside a
    # BufferedReader holds its lock and makes interpreter shutdown abort.
    fd = sys.stdin.fileno()
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass
    on_eof()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument(
        "--exit-on-stdin-eof",
        action="store_true",
        help="exit when stdin closes (the parent process died)",
    )
    args = parser.parse_args(argv)

    # Silence werkzeug's per-request access log; errors still reach stderr.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)

    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    _patch_moto()
    app = _serialise_dynamodb(DomainDispatcherApplication(create_backend_app))
    server = make_server(
        args.host, args.port, app, threaded=True, request_handler=MotoRequestHandler
    )
    port = int(server.server_address[1])
    # moto builds some URLs (e.g. SQS QueueUrl) from MOTO_PORT.
    os.environ["MOTO_PORT"] = str(port)

    def stop(signum: int = 0, frame: Any = None) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if args.exit_on_stdin_eof:
        # SIGTERM ourselves so the main thread leaves serve_forever() cleanly.
        threading.Thread(
            target=_watch_stdin,
            args=(lambda: os.kill(os.getpid(), signal.SIGTERM),),
            name="stdin-eof-watchdog",
            daemon=True,
        ).start()

    ready = {"ready": True, "port": port, "endpoint": f"http://{args.host}:{port}"}
    sys.stdout.write(json.dumps(ready) + "\n")
    sys.stdout.flush()

    try:
        server.serve_forever()
    except SystemExit:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
