/**
 * How the docs test reads a block: commands, comments, continuations, here-documents, and
 * the checks a trailing comment promises (run by bash against a stand-in kubectl).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { type DocStep, PREAMBLE, splitComment, steps, withCheck } from './doc-commands.ts';

type Command = Extract<DocStep, { kind: 'command' }>;

test('a trailing comment is split off outside quotes only', () => {
  assert.deepEqual(splitComment('kubectl get pods   # the pods'), {
    code: 'kubectl get pods',
    comment: 'the pods',
  });
  assert.deepEqual(splitComment(`echo '# not a comment' "a # b"`), {
    code: `echo '# not a comment' "a # b"`,
    comment: '',
  });
  assert.deepEqual(splitComment('echo a#b'), { code: 'echo a#b', comment: '' });
});

test('a block splits into commands: continuations and here-documents belong to theirs', () => {
  const script = [
    '# 1. first',
    'kubectl create ns a   # yes: a comment',
    'kubectl create clusterrolebinding x \\',
    '  --serviceaccount=a:b',
    "kubectl apply -f - <<'EOF'",
    'kind: ConfigMap',
    '# inside the document, not a comment',
    'EOF',
    '',
    'echo done',
  ].join('\n');
  const got = steps(script);
  assert.deepEqual(
    got.map((s) => (s.kind === 'command' ? `${s.first} | ${s.comment}` : `comment ${s.text}`)),
    [
      'comment # 1. first',
      'kubectl create ns a | yes: a comment',
      'kubectl create clusterrolebinding x \\ | ',
      "kubectl apply -f - <<'EOF' | ",
      'echo done | ',
    ],
  );
  assert.equal(
    (got[3] as Command).text,
    "kubectl apply -f - <<'EOF'\nkind: ConfigMap\n# inside the document, not a comment\nEOF",
  );
  assert.equal((got[2] as Command).text, 'kubectl create clusterrolebinding x \\\n  --serviceaccount=a:b');
});

/** Runs `line` after the preamble with kubectl answering `answer` (exit `rc`); its exit code. */
function check(line: string, answer: string, rc: number): number {
  const [step] = steps(line) as [Command];
  const fake = `kubectl() { printf '%s' '${answer}'; return ${rc}; }`;
  try {
    execFileSync('bash', ['-e', '-c', `${PREAMBLE}\n${fake}\n${withCheck(step, step.text)}`], {
      stdio: 'pipe',
    });
    return 0;
  } catch (err) {
    return (err as { status: number }).status;
  }
}

test("kubectl auth can-i's answer is checked against the comment", () => {
  assert.equal(check('kubectl auth can-i patch pods   # yes: releasing', 'yes', 0), 0);
  assert.equal(check('kubectl auth can-i get secrets  # no', 'no', 1), 0);
  assert.notEqual(check('kubectl auth can-i get secrets  # no', 'yes', 0), 0);
  assert.notEqual(check('kubectl auth can-i patch pods   # yes', 'no', 1), 0);
});

test('"# prints nothing" is checked', () => {
  assert.equal(check('kubectl get cm hello --ignore-not-found # prints nothing: new', '', 0), 0);
  assert.notEqual(check('kubectl get cm hello --ignore-not-found # prints nothing: new', 'hello', 0), 0);
});
