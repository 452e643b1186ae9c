# Calls that break the SDK's types. `cargo xtask sdk-check` requires `mypy --strict` to
# report an error on every line marked `wrong:` and on no other line.
from sdk import ClassArgs, tools


async def bad() -> None:
    await tools.scalars({"s": 1, "n": 1.5, "i": 2, "b": True, "z": None})  # wrong: an int for a str
    await tools.scalars({"s": "x", "n": 1.5, "i": 2, "b": True})  # wrong: a required key is missing
    await tools.enums({"color": "purple", "level": 1})  # wrong: not a member of the Literal
    await tools.consts({"kind": "other", "version": 2})  # wrong: not the const
    await tools.bash({"workdir": "/tmp"})  # wrong: the required command is missing
    await tools.closed_args({"empty": {}, "extra": 1})  # wrong: an undeclared key
    await tools.objects({"open": {"a": "x"}, "closed_empty": {"a": 1}})  # wrong: a key on a closed empty TypedDict
    await tools.todo_write({"todos": [{"content": "a", "status": "later"}]})  # wrong: a nested Literal
    await tools.union({"value": 1.5})  # wrong: a float is in no branch
    await tools.arrays("text")  # wrong: the arguments must be a dict
    n: int = await tools.deep_union({})  # wrong: the output is str | None
    s: str = await tools.arrays({"numbers": []})  # wrong: the output is list[list[int]]
    await tools.no_such_tool({})  # wrong: no such tool
    args: ClassArgs = {"value": 1}  # wrong: the subscript tool's stub types its arguments
    await tools["my-mcp.tool"]("text")  # wrong: the arguments must be a dict
    await tools["class"]({"value": 1})  # wrong: the subscript call is typed too
    await tools["no such tool"]({})  # wrong: no such tool
    await tools.search_tools(3)  # wrong: the query is a str
    await tools.search_tools("weather", limit="5")  # wrong: the limit is an int
    d: str = await tools.describe_tool("scalars")  # wrong: a ToolDescription or None
    print(n, s, args, d)
