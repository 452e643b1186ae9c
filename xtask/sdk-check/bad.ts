// Calls that break the SDK's types. `cargo xtask sdk-check` requires `tsc --strict` to
// report an error on every line marked `wrong:` and on no other line.

async function bad(): Promise<void> {
  await tools.scalars({ s: 1, n: 1.5, i: 2, b: true, z: null }); // wrong: a number for a string
  await tools.scalars({ s: "x", n: 1.5, i: 2, b: true }); // wrong: a required field is missing
  await tools.enums({ color: "purple", level: 1 }); // wrong: not a member of the enum
  await tools.consts({ kind: "other", version: 2 }); // wrong: not the const
  await tools.bash({ workdir: "/tmp" }); // wrong: the required command is missing
  await tools.closed_args({ empty: {}, extra: 1 }); // wrong: an undeclared key on a closed object
  await tools.objects({ open: { a: "x" }, closed_empty: { a: 1 } }); // wrong: a key on a closed empty object
  await tools.todo_write({ todos: [{ content: "a", status: "later" }] }); // wrong: a nested enum
  await tools.union({ value: true }); // wrong: a boolean is in no branch
  await tools["my-mcp.tool"]("text"); // wrong: the arguments must be an object
  const n: number = await tools._private({}); // wrong: the output is null
  const s: string = await tools.arrays({ numbers: [] }); // wrong: the output is number[][]
  await tools.no_such_tool({}); // wrong: no such tool
  await tools.$search(3); // wrong: the query is a string
  await tools.$search("weather", { limit: "5" }); // wrong: the limit is a number
  const d: string = await tools.$describe("scalars"); // wrong: a description or null
  console.log(n, s, d);
}

void bad();
