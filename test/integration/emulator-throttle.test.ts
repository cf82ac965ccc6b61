/**
 * The local emulator serves DynamoDB one request at a time (scripts/emulator/serve.py). A request that cannot get
 * its turn within the wait is refused as DynamoDB refuses a table over capacity, with a retryable
 * ThrottlingException, instead of queueing past the time its client waits: unbounded, the queue collapsed under
 * a 300 s chaos drill. The wrapper is driven here with a stand-in WSGI app that holds the turn for 600 ms.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const python = path.join(repoRoot, '.venv-emulator', 'bin', 'python');

const SCRIPT = `
import json, sys, threading, time
sys.path.insert(0, sys.argv[1])
import serve

def slow_app(environ, start_response):
    time.sleep(0.6)
    start_response("200 OK", [("Content-Type", "application/x-amz-json-1.0")])
    return [b"{}"]

wrapped = serve._serialise_dynamodb(slow_app, max_wait_seconds=0.2)
outcomes = []

def call(delay):
    time.sleep(delay)
    status = []
    body = b"".join(wrapped({"HTTP_X_AMZ_TARGET": "DynamoDB_20120810.GetItem"}, lambda s, h: status.append((s, dict(h)))))
    outcomes.append({"status": status[0][0], "errorType": status[0][1].get("x-amzn-ErrorType"), "body": json.loads(body)})

threads = [threading.Thread(target=call, args=(0,)), threading.Thread(target=call, args=(0.05,))]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps(sorted(outcomes, key=lambda o: o["status"])))
`;

describe('the emulator’s DynamoDB turn', () => {
  it('refuses a request that waited longer than its turn allows with a retryable ThrottlingException; the request holding it is served', () => {
    const out = execFileSync(python, ['-c', SCRIPT, path.join(repoRoot, 'scripts', 'emulator')], { encoding: 'utf8' });
    const [served, refused] = JSON.parse(out) as { status: string; errorType?: string; body: { __type?: string } }[];
    expect(served).toMatchObject({ status: '200 OK', body: {} });
    expect(refused).toMatchObject({
      status: '400 Bad Request',
      errorType: 'ThrottlingException',
      body: { __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException' },
    });
  });
});
