import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type FuncMap, Template } from '../../../src/cluster/kubelet/gotemplate/index.ts';

function render(src: string, data: unknown = {}, funcs: FuncMap = {}): string {
  const t = Template.parse(src, Object.keys(funcs));
  if (!t.ok) throw new Error(t.error);
  const r = t.value.execute(data, funcs);
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

function parseError(src: string, funcs: string[] = []): string {
  const t = Template.parse(src, funcs);
  assert.equal(t.ok, false);
  return t.ok ? '' : t.error;
}

function execError(src: string, data: unknown = {}): string {
  const t = Template.parse(src);
  if (!t.ok) throw new Error(t.error);
  const r = t.value.execute(data);
  assert.equal(r.ok, false);
  return r.ok ? '' : r.error;
}

describe('Go text/template', () => {
  test('trim markers remove all adjacent whitespace', () => {
    assert.equal(render('a  {{- "b" -}}  \n c'), 'abc');
    assert.equal(render('a {{ "b" }} c'), 'a b c');
    assert.equal(render('x\n  {{- /* note */ -}}\n  y'), 'xy');
  });

  test('field access on dot, missing fields print <no value>', () => {
    const pod = { metadata: { name: 'p' }, spec: { containers: [{ name: 'a' }] } };
    assert.equal(
      render('{{ .metadata.name }}/{{ .spec.containers }}/{{ .status.phase }}', pod),
      'p/[map[name:a]]/<no value>',
    );
    assert.equal(render('{{ .m }}', { m: { b: 1, a: [true, null] } }), 'map[a:[true <nil>] b:1]');
  });

  test('variables, assignment and $ inside blocks', () => {
    assert.equal(
      render('{{ $x := .a }}{{ if true }}{{ $x = "changed" }}{{ end }}{{ $x }}', { a: 'orig' }),
      'changed',
    );
    assert.equal(
      render('{{ range .items }}{{ $.prefix }}{{ . }} {{ end }}', { prefix: '#', items: [1, 2] }),
      '#1 #2 ',
    );
    // A variable lives until the end of the block that declared it; Go rejects this at parse time.
    assert.equal(
      parseError('{{ if true }}{{ $v := 1 }}{{ end }}{{ $v }}'),
      'template: _:1: undefined variable "$v"',
    );
    assert.equal(parseError('{{ $w = 1 }}'), 'template: _:1: undefined variable "$w"');
  });

  test('if / else if / else and with / else', () => {
    const t = '{{ if eq .a "x" }}X{{ else if eq .a "y" }}Y{{ else }}Z{{ end }}';
    assert.equal(render(t, { a: 'x' }), 'X');
    assert.equal(render(t, { a: 'y' }), 'Y');
    assert.equal(render(t, { a: 'q' }), 'Z');
    assert.equal(render('{{ with .m }}{{ .k }}{{ else }}none{{ end }}', { m: { k: 'v' } }), 'v');
    assert.equal(render('{{ with .m }}{{ .k }}{{ else }}none{{ end }}', { m: {} }), 'none');
  });

  test('range over lists with index, maps in key order, integers; else; break and continue', () => {
    assert.equal(
      render('{{ range $i, $c := .l }}{{ $i }}={{ $c }};{{ end }}', { l: ['a', 'b'] }),
      '0=a;1=b;',
    );
    assert.equal(render('{{ range $k, $v := .m }}{{ $k }}{{ $v }}{{ end }}', { m: { b: 2, a: 1 } }), 'a1b2');
    assert.equal(render('{{ range 3 }}{{ . }}{{ end }}'), '012');
    assert.equal(render('{{ range .none }}x{{ else }}empty{{ end }}'), 'empty');
    assert.equal(
      render(
        '{{ range .l }}{{ if eq . 2 }}{{ continue }}{{ end }}{{ if eq . 4 }}{{ break }}{{ end }}{{ . }}{{ end }}',
        {
          l: [1, 2, 3, 4, 5],
        },
      ),
      '13',
    );
  });

  test('truthiness follows Go: empty strings, zero, empty lists and maps are false', () => {
    const t = '{{ if .v }}T{{ else }}F{{ end }}';
    for (const v of ['', 0, [], {}, null, false]) assert.equal(render(t, { v }), 'F');
    for (const v of ['x', 1, [0], { a: 1 }, true]) assert.equal(render(t, { v }), 'T');
  });

  test('and/or return an operand and short-circuit; not, comparisons', () => {
    assert.equal(render('{{ or .a .b "c" }}', { b: 'B' }), 'B');
    assert.equal(render('{{ and 1 0 2 }}'), '0');
    assert.equal(render('{{ or .x false }}'), 'false');
    // The second operand would fail if evaluated.
    assert.equal(render('{{ and .missing (index .missing 0) }}'), '<no value>');
    assert.equal(
      render(
        '{{ not "" }} {{ eq 1 2 1 }} {{ ne "a" "b" }} {{ lt 1 2 }} {{ le 2 2 }} {{ gt "b" "a" }} {{ ge 1 3 }}',
      ),
      'true true true true true true false',
    );
    assert.match(execError('{{ eq "a" true }}'), /incompatible types for comparison/);
  });

  test('len, index, slice, print, printf', () => {
    assert.equal(render('{{ len .l }} {{ len "héllo" }} {{ len .m }}', { l: [1, 2], m: { a: 1 } }), '2 6 1');
    assert.equal(
      render('{{ index .l 1 }} {{ index .m "k" }} {{ index .n 0 "x" }}', {
        l: ['a', 'b'],
        m: { k: 'v' },
        n: [{ x: 'y' }],
      }),
      'b v y',
    );
    assert.equal(render('{{ slice .l 1 3 }}', { l: [1, 2, 3, 4] }), '[2 3]');
    assert.equal(render('{{ print 1 2 "a" "b" 3 }}'), '1 2ab3');
    assert.equal(
      render('{{ printf "%s=%d %v %q %5.2f|%-4s|%03d %%" "k" 7 true "q" 3.14159 "ab" 5 }}'),
      'k=7 true "q"  3.14|ab  |005 %',
    );
    assert.equal(render('{{ printf "%d" "x" }}'), '%!d(string=x)');
    assert.match(execError('{{ index .l 5 }}', { l: [1] }), /index out of range: 5/);
    assert.match(execError('{{ index .nothing 0 }}'), /index of untyped nil/);
  });

  test('pipelines pass the value as the last argument; parenthesised pipelines take fields', () => {
    const funcs: FuncMap = {
      Twice: (s) => `${String(s)}${String(s)}`,
      Join: (a, b) => `${String(a)}-${String(b)}`,
    };
    assert.equal(render('{{ .a | Twice }}', { a: 'x' }, funcs), 'xx');
    assert.equal(render('{{ .a | Join "p" }}', { a: 'x' }, funcs), 'p-x');
    assert.equal(render('{{ (index .l 0).name | printf "<%s>" }}', { l: [{ name: 'n' }] }), '<n>');
  });

  test('literals: strings with escapes, raw strings, chars, numbers, nil', () => {
    assert.equal(
      render('{{ "a\\tb\\u00e9" }}|{{ `raw\\n` }}|{{ \'a\' }}|{{ 0x1F }}|{{ -2 }}|{{ 1.5e3 }}'),
      'a\tbé|raw\\n|97|31|-2|1500',
    );
  });

  test('parse errors name the problem and the line', () => {
    assert.equal(parseError('line1\n{{ Nope }}'), 'template: _:2: function "Nope" not defined');
    assert.match(parseError('{{ if .a }}x'), /unexpected EOF/);
    assert.match(parseError('{{ end }}'), /unexpected \{\{end\}\}/);
    assert.match(parseError('{{ .a'), /unclosed action/);
    assert.match(parseError('{{ "abc }}'), /unterminated quoted string|unclosed action/);
    assert.match(parseError('{{ template "x" }}'), /not supported/);
    assert.match(parseError('{{ .a .b }}'), /can't give argument to non-function \.a/);
    assert.match(parseError('{{ break }}'), /outside \{\{range\}\}/);
  });

  test('execution errors are returned, not thrown', () => {
    assert.match(execError('{{ .a.b }}', { a: 'str' }), /can't evaluate field b in type string/);
    const t = Template.parse('{{ Boom }}', ['Boom']);
    assert.ok(t.ok);
    const r = t.ok
      ? t.value.execute(
          {},
          {
            Boom: () => {
              throw new Error('kaput');
            },
          },
        )
      : undefined;
    assert.deepEqual(r, { ok: false, error: 'template: _:1: executing "_": error calling Boom: kaput' });
  });

  test('a parsed template renders many times with different data', () => {
    const t = Template.parse('{{ .n }}');
    assert.ok(t.ok);
    if (!t.ok) return;
    assert.deepEqual(
      [1, 2, 3].map((n) => t.value.execute({ n })),
      [1, 2, 3].map((n) => ({ ok: true, value: String(n) })),
    );
  });
});
