/**
 * The pod subresources kubectl streams or proxies through: exec and attach (WebSocket
 * v5.channel.k8s.io, the simulated shell), port-forward (SPDY over WebSocket and plain SPDY, to
 * KWOK PortForward targets),
 * ephemeralcontainers (`kubectl debug`), and pods/services/nodes proxy (`kubectl get --raw`,
 * `kubectl proxy`).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { WebSocket } from 'ws';
import { startTestCluster, type TestCluster } from '../../support/cluster.ts';
import { pythonScenario } from '../../support/python.ts';
import { waitFor } from '../../support/wait.ts';

const POD = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  containers:
  - name: app
    image: nginx
    env: [{name: GREETING, value: hello}]
    ports: [{name: http, containerPort: 8080}]
  - name: side
    image: busybox
    command: [sh, -c, 'sleep 3600']
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
`;

/** Runs kubectl as a long-lived process (attach, proxy), collecting its output. */
function spawnKubectl(c: TestCluster, args: string[], env: Record<string, string> = {}) {
  const child = spawn('kubectl', ['--kubeconfig', c.kubeconfigPath, ...args], {
    stdio: 'pipe',
    env: { ...process.env, ...env },
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => {
    out.stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    out.stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, out, exited };
}

describe('pod streaming and proxy subresources', () => {
  let c: TestCluster;
  before(async () => {
    c = await startTestCluster({ nodes: 1, timeScale: 20 });
    await c.kubectl(['apply', '-f', '-'], POD);
    await waitFor(
      'web running',
      async () => (await c.kubectl(['get', 'pod', 'web', '-o', 'jsonpath={.status.phase}'])) === 'Running',
    );
  });
  let closed = false;
  after(async () => {
    if (!closed) await c.close();
  });

  test('kubectl exec runs the command in the simulated shell, with its exit code', async () => {
    assert.equal(await c.kubectl(['exec', 'web', '-c', 'app', '--', 'echo', 'hi', 'there']), 'hi there\n');
    assert.equal(
      await c.kubectl(['exec', 'web', '-c', 'app', '--', 'sh', '-c', 'echo $GREETING from $HOSTNAME']),
      'hello from web\n',
    );
    const failed = await c.kubectlResult(['exec', 'web', '-c', 'app', '--', 'sh', '-c', 'echo oops; exit 3']);
    assert.equal(failed.code, 3);
    assert.equal(failed.stdout, 'oops\n');
    assert.match(failed.stderr, /command terminated with exit code 3/);
    const missing = await c.kubectlResult(['exec', 'web', '-c', 'app', '--', 'nosuchtool']);
    assert.equal(missing.code, 127);
    assert.match(missing.stderr, /sh: nosuchtool: not found/);
    // stdin: an interactive shell reads commands line by line.
    const piped = await c.kubectl(
      ['exec', '-i', 'web', '-c', 'app', '--', 'sh'],
      'echo one\necho two\nexit 0\n',
    );
    assert.equal(piped, 'one\ntwo\n');
  });

  test('the Python client execs over v4.channel.k8s.io, adds ephemeral containers (one that ends), proxies to the node', async () => {
    await c.kubectl(['create', 'namespace', 'pyexec']);
    assert.deepEqual(await pythonScenario('exec', c.kubeconfigPath, 'pyexec'), {
      stdout: 'from python\n',
      code: 4,
      ephemeralRunning: true,
      ephemeralExit: [6, 'Error', 'bye\n'],
      healthz: 'ok',
      podProxy: 503,
    });
  });

  test('exec errors: unknown container, missing pod, malformed requests, no node', async () => {
    const bad = await c.kubectlResult(['exec', 'web', '-c', 'nope', '--', 'true']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /container nope is not valid for pod web/);
    const gone = await c.kubectlResult(['exec', 'ghost', '--', 'true']);
    assert.match(gone.stderr, /pods "ghost" not found/);
    // Malformed requests: 400s with the kubelet's and kube-apiserver's reasons, never a 5xx.
    const raw = async (query: string) =>
      (await c.kubectlResult(['get', '--raw', `/api/v1/namespaces/default/pods/web/exec?${query}`])).stderr;
    assert.match(await raw('container=app&stdout=true'), /BadRequest.*you must specify at least one command/);
    assert.match(
      await raw('container=app&command=ls'),
      /BadRequest.*you must specify at least 1 of stdin, stdout, stderr/,
    );
    assert.match(await raw('container=app&command=ls&stdout=true'), /BadRequest.*Upgrade request required/);
    assert.match(
      (await c.kubectlResult(['get', '--raw', '/api/v1/namespaces/default/pods/web/portforward?ports=80']))
        .stderr,
      /BadRequest.*Upgrade request required/,
    );
    await c.kubectl([
      'run',
      'gated',
      '--image=nginx',
      '--overrides={"spec":{"schedulingGates":[{"name":"hold"}]}}',
    ]);
    assert.match(
      (await c.kubectlResult(['exec', 'gated', '--', 'true'])).stderr,
      /pod gated does not have a host assigned/,
    );
  });

  test('kubectl attach follows the container log', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-attach-'));
    const log = join(dir, 'app.log');
    const attached = join(dir, 'attach.log');
    await writeFile(log, 'in the log\n');
    await writeFile(attached, 'before attach\n');
    // KWOK's Attach names the file attach follows (the Logs file is kubectl logs').
    await c.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Logs
metadata: {name: web, namespace: default}
spec:
  logs:
  - containers: [app]
    logsFile: ${log}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Attach
metadata: {name: web, namespace: default}
spec:
  attaches:
  - containers: [app]
    logsFile: ${attached}
`,
    );
    const attach = spawnKubectl(c, ['attach', 'web', '-c', 'app']);
    try {
      // As KWOK's attach: what the log gains from now on (tailLines 0, follow).
      // The stream starts when kubectl has connected, which it does not announce: keep
      // logging until a line arrives.
      let n = 0;
      await waitFor(
        'a new line streamed',
        async () => {
          await appendFile(attached, `after attach ${++n}\n`);
          return attach.out.stdout.includes('after attach');
        },
        { intervalMs: 200 },
      );
      assert.match(attach.out.stdout, /^(after attach \d+\n)+$/);
      assert.doesNotMatch(attach.out.stdout, /before attach/);
    } finally {
      attach.child.kill();
      await attach.exited;
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('kubectl and the Python client port-forward to the KWOK PortForward target; a port without one is refused', async () => {
    const target = createServer((_req, res) => res.end('from the target\n'));
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const { port } = target.address() as AddressInfo;
    await c.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: kwok.x-k8s.io/v1alpha1
kind: PortForward
metadata: {name: web, namespace: default}
spec:
  forwards:
  - ports: [8080]
    target: {address: 127.0.0.1, port: ${port}}
  - ports: [8081]
    httpRoutes: [{location: /healthz, code: 200, body: ok, headers: [{name: X-From, value: kwok}]}]
`,
    );
    // The WebSocket tunnel (kubectl's default) and the plain SPDY upgrade it falls back to.
    const forwards = [
      spawnKubectl(c, ['port-forward', 'pod/web', ':8080']),
      spawnKubectl(c, ['port-forward', 'pod/web', ':8080'], { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' }),
    ];
    const refused = spawnKubectl(c, ['port-forward', 'pod/web', ':9090']);
    const localPort = async (pf: ReturnType<typeof spawnKubectl>) => {
      await waitFor('kubectl listening', async () => /Forwarding from 127\.0\.0\.1:\d+/.test(pf.out.stdout));
      return /Forwarding from 127\.0\.0\.1:(\d+)/.exec(pf.out.stdout)![1];
    };
    const answers: string[] = [];
    let refusedOutcome = '';
    let python: { body?: string; routed?: string; header?: boolean; error?: string } = {};
    try {
      for (const pf of forwards)
        answers.push(await (await fetch(`http://127.0.0.1:${await localPort(pf)}/`)).text());
      const local = await localPort(refused);
      await fetch(`http://127.0.0.1:${local}/`).catch(() => undefined);
      await waitFor('kubectl reports the refusal', async () => /connection refused/.test(refused.out.stderr));
      refusedOutcome = refused.out.stderr;
      // The Python client speaks the older WebSocket channel protocol (v4.channel.k8s.io).
      python = await pythonScenario('portforward', c.kubeconfigPath, 'default');
    } finally {
      for (const pf of [...forwards, refused]) {
        pf.child.kill();
        await pf.exited;
      }
      await new Promise((resolve) => target.close(resolve));
    }
    assert.deepEqual(answers, ['from the target\n', 'from the target\n']);
    const badRoute = await c.kubectlResult(
      ['apply', '-f', '-'],
      `apiVersion: kwok.x-k8s.io/v1alpha1
kind: PortForward
metadata: {name: bad, namespace: default}
spec:
  forwards:
  - httpRoutes: [{location: /, code: 200, headers: [{name: 'Bad Header', value: x}]}]
`,
    );
    assert.match(
      badRoute.stderr,
      /spec\.forwards\[0\]\.httpRoutes\[0\]\.headers\[0\]\.name: Invalid value: "Bad Header": spec\.forwards\[0\]\.httpRoutes\[0\]\.headers\[0\]\.name in body should match/,
    );
    // A channel-protocol request must name its ports (the kubelet's NewV4Options): 400s.
    const rejected = (query: string) =>
      new Promise<string>((resolve, reject) => {
        const { url, token, ca } = c.cluster.server;
        const ws = new WebSocket(
          `${url.replace('https', 'wss')}/api/v1/namespaces/default/pods/web/portforward${query}`,
          ['v4.channel.k8s.io'],
          { headers: { Authorization: `Bearer ${token}` }, ca },
        );
        ws.once('unexpected-response', (_req, res) => {
          let body = '';
          res.on('data', (d: Buffer) => {
            body += d.toString();
          });
          res.on('end', () => resolve(`${res.statusCode} ${JSON.parse(body).message}`));
        });
        ws.once('open', () => {
          ws.close();
          reject(new Error('upgraded'));
        });
        ws.once('error', reject);
      });
    assert.equal(await rejected(''), '400 query parameter "port" is required');
    assert.equal(await rejected('?ports=0'), '400 port "0" must be > 0');
    assert.equal(await rejected('?ports=80,http'), '400 unable to parse "80,http" as a port');
    assert.equal(python.body, 'from the target\n');
    assert.equal(python.routed, 'HTTP/1.1 200 OK ok');
    assert.equal(python.header, true);
    assert.match(
      python.error ?? '',
      /error forwarding port 9090 to pod default\/web, uid [0-9a-f-]+: dial tcp4 127\.0\.0\.1:9090: connect: connection refused/,
    );
    assert.match(
      refusedOutcome,
      /an error occurred forwarding \d+ -> 9090: error forwarding port 9090 to pod default\/web, uid [0-9a-f-]+: dial tcp4 127\.0\.0\.1:9090: connect: connection refused/,
    );
  });

  test('kubectl port-forward svc/ reaches the pod behind the Service at its targetPort; a ClusterPortForward command target carries the connection', async () => {
    // kubectl resolves the Service to a running pod of its selector and the Service port to the
    // container port its (named) targetPort names; the kubelet then forwards the pod's port.
    await c.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: Pod
metadata: {name: echo, namespace: default, labels: {app: echo}}
spec:
  containers: [{name: app, image: busybox, ports: [{name: tcp, containerPort: 7000}]}]
---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: default}
spec:
  selector: {app: echo}
  ports: [{name: tcp, port: 70, targetPort: tcp}, {name: bad, port: 71, targetPort: 7001}]
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterPortForward
metadata: {name: echo}
spec:
  selector: {matchNamespaces: [default], matchNames: [echo]}
  forwards:
  - ports: [7000]
    command: [cat]
  - ports: [7001]
    command: [sh, -c, 'exit 2']
`,
    );
    await waitFor(
      'echo running',
      async () => (await c.kubectl(['get', 'pod', 'echo', '-o', 'jsonpath={.status.phase}'])) === 'Running',
    );
    const viaSvc = spawnKubectl(c, ['port-forward', 'svc/echo', ':70', ':71']);
    let echoed = '';
    let mapping = '';
    let failure = '';
    try {
      const [local, bad] = await waitFor('kubectl listening on both ports', async () => {
        const m = [...viaSvc.out.stdout.matchAll(/Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)/g)];
        return m.length >= 2
          ? [m.find((x) => x[2] === '7000')![1], m.find((x) => x[2] === '7001')![1]]
          : undefined;
      });
      mapping = viaSvc.out.stdout;
      // `cat` on the pod's side: what goes in comes back on the same connection.
      const sock = connect(Number(local), '127.0.0.1');
      sock.on('data', (d: Buffer) => {
        echoed += d.toString();
      });
      sock.write('ping over the service\n');
      await waitFor('the echo', async () => echoed === 'ping over the service\n');
      sock.destroy();
      // A command that fails is reported on the error stream with its exit status.
      const failing = connect(Number(bad), '127.0.0.1');
      failing.on('error', () => {});
      await waitFor('kubectl reports the failed command', async () =>
        /exit status 2/.test(viaSvc.out.stderr),
      );
      failing.destroy();
      failure = viaSvc.out.stderr;
    } finally {
      viaSvc.child.kill();
      await viaSvc.exited;
      await c.kubectl(['delete', 'clusterportforward', 'echo']);
    }
    assert.match(mapping, /-> 7000\n/);
    assert.equal(echoed, 'ping over the service\n');
    assert.match(
      failure,
      /an error occurred forwarding \d+ -> 7001: error forwarding port 7001 to pod default\/echo, uid [0-9a-f-]+: exit status 2/,
    );
  });

  test('kubectl debug adds an ephemeral container the simulated kubelet starts; one whose command or session ends terminates with its exit code', async () => {
    await c.kubectl(['debug', 'web', '--image=busybox', '-c', 'debugger', '--', 'sleep', '3600']);
    await waitFor(
      'debugger running',
      async () =>
        (await c.kubectl([
          'get',
          'pod',
          'web',
          '-o',
          'jsonpath={.status.ephemeralContainerStatuses[0].state.running.startedAt}',
        ])) !== '',
    );
    assert.equal(await c.kubectl(['exec', 'web', '-c', 'debugger', '--', 'echo', 'inside']), 'inside\n');
    // `kubectl debug -i` attaches with stdin to the new container's shell; the container ends
    // with the session, with the shell's exit code (the attach itself succeeds, as a kubelet's).
    const session = await c.kubectl(
      ['debug', 'web', '-i', '--image=busybox', '-c', 'shell'],
      'echo debugging $HOSTNAME\nexit 4\n',
    );
    assert.match(session, /debugging web\n/);
    // A command that ends terminates its container with its exit code; its output is the log.
    await c.kubectl([
      'debug',
      'web',
      '--image=busybox',
      '-c',
      'oneshot',
      '--',
      'sh',
      '-c',
      'echo checked $HOSTNAME; exit 3',
    ]);
    const terminated = (name: string) =>
      waitFor(`${name} terminated`, async () => {
        const pod = JSON.parse(await c.kubectl(['get', 'pod', 'web', '-o', 'json']));
        const st = pod.status.ephemeralContainerStatuses.find((s: { name: string }) => s.name === name);
        return st?.state.terminated ? { ...st.state.terminated, phase: pod.status.phase } : undefined;
      });
    // `kubectl debug -i … -- sh -c …`: the command runs whether or not a session came in time
    // (kubectl shows the log of a container already done); the session succeeds either way.
    const quick = await c.kubectlResult(
      ['debug', 'web', '-i', '--image=busybox', '-c', 'quick', '--', 'sh', '-c', 'echo quick; exit 5'],
      '',
    );
    const shell = await terminated('shell');
    const oneshot = await terminated('oneshot');
    assert.deepEqual([shell.exitCode, shell.reason, shell.phase], [4, 'Error', 'Running']);
    assert.deepEqual([oneshot.exitCode, oneshot.reason], [3, 'Error']);
    assert.equal(quick.code, 0);
    assert.equal((await terminated('quick')).exitCode, 5);
    assert.ok(Date.parse(oneshot.finishedAt) >= Date.parse(oneshot.startedAt));
    assert.equal(await c.kubectl(['logs', 'web', '-c', 'oneshot']), 'checked web\n');
    assert.match(await c.kubectl(['logs', 'web', '-c', 'shell']), /debugging web\n/);
    // A finished container takes no exec; the one still running does.
    assert.match(
      (await c.kubectlResult(['exec', 'web', '-c', 'oneshot', '--', 'true'])).stderr,
      /container not found \("oneshot"\)/,
    );
    // Existing ephemeral containers may not change or go.
    const removed = await c.kubectlResult([
      'patch',
      'pod',
      'web',
      '--subresource=ephemeralcontainers',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/ephemeralContainers/0"}]',
    ]);
    assert.notEqual(removed.code, 0);
    assert.match(removed.stderr, /existing ephemeral containers "debugger" may not be removed/);
    const withPorts = await c.kubectlResult([
      'patch',
      'pod',
      'web',
      '--subresource=ephemeralcontainers',
      '--type=strategic',
      '-p',
      '{"spec":{"ephemeralContainers":[{"name":"d2","image":"busybox","ports":[{"containerPort":80}]}]}}',
    ]);
    assert.match(
      withPorts.stderr,
      /spec\.ephemeralContainers\[\d\]\.ports: Forbidden: cannot be set for an Ephemeral Container/,
    );
  });

  test('proxy: the node answers for its kubelet, pods and Services refuse the connection', async () => {
    const node = await c.kubectl(['get', 'pod', 'web', '-o', 'jsonpath={.spec.nodeName}']);
    assert.equal(await c.kubectl(['get', '--raw', `/api/v1/nodes/${node}/proxy/healthz`]), 'ok');
    const pods = JSON.parse(await c.kubectl(['get', '--raw', `/api/v1/nodes/${node}/proxy/pods`]));
    assert.ok(pods.items.some((p: { metadata: { name: string } }) => p.metadata.name === 'web'));
    const ip = await c.kubectl(['get', 'pod', 'web', '-o', 'jsonpath={.status.podIP}']);
    const podProxy = await c.kubectlResult(['get', '--raw', '/api/v1/namespaces/default/pods/web/proxy/']);
    assert.match(
      podProxy.stderr,
      new RegExp(
        `ServiceUnavailable.*dial tcp ${ip.replaceAll('.', '\\.')}:8080: connect: connection refused`,
      ),
    );
    const svcProxy = await c.kubectlResult([
      'get',
      '--raw',
      '/api/v1/namespaces/default/services/web:http/proxy/',
    ]);
    assert.match(svcProxy.stderr, /ServiceUnavailable/);
    await c.kubectl(['create', 'service', 'clusterip', 'lonely', '--tcp=80:80']);
    const empty = await c.kubectlResult([
      'get',
      '--raw',
      '/api/v1/namespaces/default/services/lonely/proxy/',
    ]);
    assert.match(empty.stderr, /no endpoints available for service "lonely"/);
    // kubectl proxy forwards to the same subresources.
    const proxy = spawnKubectl(c, ['proxy', '--port=0']);
    try {
      const port = await waitFor(
        'kubectl proxy listening',
        async () => /Starting to serve on 127\.0\.0\.1:(\d+)/.exec(proxy.out.stdout)?.[1],
      );
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/nodes/${node}/proxy/healthz`);
      assert.equal(await res.text(), 'ok');
    } finally {
      proxy.child.kill();
      await proxy.exited;
    }
  });

  test('a WebSocket v5 exec session (raw client) streams, and the cluster closes with it open', async () => {
    const { url, token, ca } = c.cluster.server;
    const ws = new WebSocket(
      `${url.replace('https', 'wss')}/api/v1/namespaces/default/pods/web/exec?container=app&command=sh&stdin=true&stdout=true`,
      ['v5.channel.k8s.io'],
      { headers: { Authorization: `Bearer ${token}` }, ca },
    );
    const out: Buffer[] = [];
    ws.on('message', (d: Buffer) => out.push(d));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    assert.equal(ws.protocol, 'v5.channel.k8s.io');
    ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('echo over websocket\n')]));
    await waitFor('stdout message', async () =>
      out.some((m) => m[0] === 1 && m.subarray(1).toString() === 'over websocket\n'),
    );
    // The session is still open (the shell waits for more input) when the cluster stops.
    const stopped = await Promise.race([
      c.close().then(() => 'closed'),
      new Promise((r) => setTimeout(r, 20_000, 'still open')),
    ]);
    closed = true;
    assert.equal(stopped, 'closed');
  });
});
