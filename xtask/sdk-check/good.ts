// Well-typed calls of every tool in catalog.json, checked by `cargo xtask sdk-check` with
// `tsc --strict --noEmit` against the TypeScript SDK rendered from that catalog (sdk.ts).
// A run_code program is the body of an async function; this file wraps it in one.

async function main(): Promise<void> {
  // Scalars, enums, consts and exact numbers.
  const scalars: { ok: boolean } = await tools.scalars({ s: "text", n: 1.5, i: 2, b: true, z: null });
  const status: "done" | "skipped" = await tools.enums({ color: "blue|sky", level: 3, ratio: 0.5, flag: true, nothing: null, whole: 2 });
  const big: 1152921504606846976 = await tools.consts({ kind: "fixed", version: 2, pi: 3.25, yes: true, pick: "a", nil: null });
  const tiny: number = await tools.big_numbers({ huge: 9007199254740993, sci: 1e21, wide: 1e21 });
  await tools.literal_escapes({ s: "nl\n" });
  await tools.literal_escapes({ s: "say \"hi\"" });
  const quoted: "a\"b" = await tools.literal_escapes({ s: "nel\u0085 ls\u2028 ps\u2029" });

  // Unions, discriminated by a const field.
  const union = await tools.union({ value: null });
  if (union.kind === "b") {
    const n: number | undefined = union.n;
    console.log(n);
  }
  await tools.union({ value: "text" });
  await tools.union({ value: 7 });

  // Arrays and objects.
  const matrix: number[][] = await tools.arrays({
    numbers: [1, 2.5],
    anything: [1, "two", null, { three: [3] }],
    grid: [["a", null], []],
    tags: ["x", "y"],
    bars: ["a|b"],
    amp: ["a&b"],
    rows: [{ a: "x", extra: true }],
    cells: [{ a: "y" }],
  });
  const anything = await tools.any_json({ value: { nested: [1, null] }, note: "any" });
  const objects = await tools.objects({
    open: { a: "x", more: 1 },
    closed: {},
    open_empty: { any: "thing" },
    closed_empty: {},
    closed_empty_props: {},
    open_empty_props: {},
  });
  const value: string = objects.nested.deep.value;
  const grids = await tools.deep_lists({ grid: [] });
  const maybe: string | null = await tools.deep_union({});
  const nothing: null = await tools.deep_objects({ level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: { level: "deep" } } } } } } } } } } } } } } } } } } } } } } } } } } } } } });
  const closedArgs = await tools.closed_args({ mode: { a: "x" }, empty: {} });
  const n: 1 | 2 = closedArgs[0]!.n;
  await tools.closed_args({ mode: null, empty: {} });

  // Unsupported schemas degrade to `unknown`, which accepts any argument.
  const degraded: unknown = await tools.unsupported({ a: 1 });
  const malformed: boolean = (await tools.malformed("anything")).ok;

  // Descriptions of every kind.
  await tools.no_description({});
  await tools.blank_description({ x: "x", extra: 1 });
  await tools.descriptions({ a: "x", b: 1 });
  await tools.plain({ anything: [1] });

  // Names: bare keys, quoted keys, reserved words, Unicode.
  const shell = await tools.bash({ command: "ls", workdir: "/tmp" });
  const code: number | null = shell.exitCode;
  const count: number = (await tools.todo_write({ todos: [{ content: "a", status: "done" }] })).count;
  const exotic: string[] = await tools["my-mcp.tool"]({});
  await tools.class({ value: "v" });
  const nil: null = await tools._private({});
  await tools.__meta__({ x: 1 });
  await tools.__token({ x: 1 });
  await tools.__proto__({});
  const first: boolean = (await tools["1st-tool"]({ ok: true })).ok;
  const found: string[] = await tools["\ufb01nd"]({ q: "query" });
  await tools["搜索"]({ opts: { "路径": "/", "深度": 2 } });
  await tools["ünï"]({ x: "x" });
  await tools["a\u200cb"]({ x: "x" });
  await tools["\u0301abc"]({ x: "x" });
  await tools["\u019bx"]({ x: "x" });
  await tools["my-tool"]({ x: "x" });
  await tools["my.tool"]({ y: "y" });
  await tools["a|b"]({ x: "x" });
  const listed: string[] = await tools.list({});
  await tools.str({});
  await tools.match({ case: "c", type: "t", _: 1 });
  await tools.type({});
  await tools.$dollar({ $ok: "x" });
  await tools["𐐀𐐨"]({ x: "x" });
  await tools["a_very_long_tool_name_a_very_long_tool_name_a_very_long_tool_name_a_very_long_tool_name_a_very_long_tool_name_a_very_long_tool_name_a_very_long_tool_name_a_very_long_tool_name_a_very_long_tool_name_a_"]({ nested: { x: "x" } });
  await tools.fields_ok({ match: "m", case: "c", type: "t", _: "u", __meta__: "d", "路径": "p", "深度": 1, str: "s", list: 2 });
  await tools.fields_degrade({ "my-key": "k", "1abc": "a", "": "e", $ok: "o", class: "c", __token: "t", "\ufb01eld": "f" });
  await tools.phases({ phase: { v: "a" }, phase2: { v: "b" }, Phase: { v: "c" } });
  await tools.hangul({ "\uac00": { "\u11a8": { y: "y" } }, "\uac01": { z: "z" } });
  await tools.foo({ args: { x: "x" } });
  await tools.foo_args({ y: "y" });
  await tools.FooArgs({});

  // Overlap and errors.
  const [a, b] = await Promise.all([tools.str({}), tools.list({})]);
  try {
    await tools.bash({ command: "false" });
  } catch (error) {
    if (error instanceof ToolCallError) {
      const failed: ToolName = error.toolName;
      console.log(failed, error.message);
    }
  }
  console.log(scalars, status, big, tiny, quoted, matrix, anything, value, grids, maybe, nothing, n);
  console.log(degraded, malformed, code, count, exotic, nil, first, found, listed, a, b);

  // The tool-search helpers (the SDK is rendered as for a scope with deferred tools).
  const hits: { name: string; description: string; signature: string }[] = await tools.$search("weather", { limit: 3 });
  const more = await tools.$search("weather");
  const about = await tools.$describe(hits[0]?.name ?? "scalars");
  if (about !== null) {
    const schema: { [key: string]: JsonValue } = about.parameters;
    console.log(schema, about.signature, more.length);
  }
  return;
}

void main();
