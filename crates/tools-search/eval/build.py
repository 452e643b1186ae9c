#!/usr/bin/env python3
"""Build the tool-search evaluation set (catalog.jsonl, requests.jsonl).

Source: the data folder of the PyPI package `bfcl-eval` (Berkeley Function
Calling Leaderboard, Apache-2.0), pinned below by version and wheel SHA-256.

Fetch the wheel (any of these):

    python3 -m pip download bfcl-eval==2026.3.23 --no-deps --only-binary=:all: -d /tmp/bfcl
    python3 build.py --wheel /tmp/bfcl/bfcl_eval-2026.3.23-py3-none-any.whl

or let the script call pip itself (into a temporary cache folder):

    python3 build.py --fetch

Check that the files on disk are exactly what the script produces, and that
they are well formed:

    python3 build.py --wheel WHEEL --check   # or --fetch --check

`python3 build.py --check` alone (no wheel) checks the files' structure only:
every line is JSON with the expected keys, names are unique and match
^[a-zA-Z0-9_.-]{1,128}$, every `expected` is a catalog name, and no tool is
expected more than MAX_PER_TOOL times.

Only the standard library is used; the wheel is read with `zipfile`, never
installed. The output is byte-for-byte the same on every run with the same
wheel (no clocks, no unseeded randomness, no dict-order dependence beyond
the source files' own order).
"""

import argparse
import collections
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

BFCL_VERSION = "2026.3.23"
BFCL_WHEEL = f"bfcl_eval-{BFCL_VERSION}-py3-none-any.whl"
BFCL_WHEEL_SHA256 = "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"
DATA = "bfcl_eval/data/"

# Single-turn question files whose `function` lists feed the catalog, in the
# order used to break ties between definitions (first seen wins a tie).
CATALOG_CATEGORIES = [
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_relevance",
    "irrelevance",
    "live_irrelevance",
]

# Multi-turn API classes (class name -> function-doc file), as BFCL maps them.
# Their functions are qualified with the class name, because bare names such
# as `cd`, `add` or `send_message` clash with single-turn tools and with each
# other (the three memory back ends share most names).
MULTI_TURN_CLASSES = [
    ("GorillaFileSystem", "gorilla_file_system.json"),
    ("MathAPI", "math_api.json"),
    ("MessageAPI", "message_api.json"),
    ("TwitterAPI", "posting_api.json"),
    ("TicketAPI", "ticket_api.json"),
    ("TradingBot", "trading_bot.json"),
    ("TravelAPI", "travel_booking.json"),
    ("VehicleControlAPI", "vehicle_control.json"),
    ("WebSearchAPI", "web_search.json"),
    ("MemoryAPI_kv", "memory_kv.json"),
    ("MemoryAPI_vector", "memory_vector.json"),
    ("MemoryAPI_rec_sum", "memory_rec_sum.json"),
]

# Categories whose questions have a single ground-truth call each; requests
# are drawn from these only.
REQUEST_CATEGORIES = [
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "live_simple",
    "live_multiple",
]
REQUEST_SEED = "tools-search-eval-v1"
REQUEST_TARGET = 500
MAX_PER_TOOL = 3

NAME_RE = re.compile(r"^[a-zA-Z0-9_.-]{1,128}$")

# BFCL's type names (Python, Java and JavaScript flavoured) -> JSON Schema.
# None means "no type constraint": the `type` key is dropped.
TYPE_MAP = {
    "dict": "object",
    "object": "object",
    "HashMap": "object",
    "float": "number",
    "double": "number",
    "number": "number",
    "integer": "integer",
    "long": "integer",
    "string": "string",
    "String": "string",
    "char": "string",
    "boolean": "boolean",
    "Boolean": "boolean",
    "array": "array",
    "tuple": "array",
    "Array": "array",
    "ArrayList": "array",
    "any": None,
    "": None,
}
# Keys that are not JSON Schema and carry nothing `required` does not.
DROP_KEYS = {"optional"}


def normalise_schema(node, where):
    if not isinstance(node, dict):
        raise ValueError(f"{where}: schema node is not an object: {node!r}")
    out = {}
    for key, value in node.items():
        if key in DROP_KEYS:
            continue
        if key == "type":
            if value not in TYPE_MAP:
                raise ValueError(f"{where}: unknown type {value!r}")
            mapped = TYPE_MAP[value]
            if mapped is not None:
                out["type"] = mapped
        elif key == "properties":
            out["properties"] = {
                prop: normalise_schema(sub, f"{where}.{prop}") for prop, sub in value.items()
            }
        elif key == "items":
            if isinstance(value, list):
                out["items"] = [normalise_schema(v, f"{where}[]") for v in value]
            else:
                out["items"] = normalise_schema(value, f"{where}[]")
        elif key == "additionalProperties" and isinstance(value, dict):
            out[key] = normalise_schema(value, f"{where}{{}}")
        elif key in ("anyOf", "oneOf", "allOf"):
            out[key] = [normalise_schema(v, f"{where}|") for v in value]
        else:
            out[key] = value
    return out


def normalise_parameters(params, where):
    out = normalise_schema(params, where)
    if out.get("type", "object") != "object":
        raise ValueError(f"{where}: root type is {out.get('type')!r}")
    root = {"type": "object"}
    root.update((k, v) for k, v in out.items() if k != "type")
    root.setdefault("properties", {})
    return root


def read_jsonl(zf, path):
    text = zf.read(DATA + path).decode("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def open_wheel(path):
    with open(path, "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()
    if digest != BFCL_WHEEL_SHA256:
        sys.exit(f"{path}: sha256 {digest}, expected {BFCL_WHEEL_SHA256} ({BFCL_WHEEL})")
    return zipfile.ZipFile(path)


def fetch_wheel():
    cache = os.path.join(tempfile.gettempdir(), "tools-search-eval-cache")
    path = os.path.join(cache, BFCL_WHEEL)
    if not os.path.exists(path):
        os.makedirs(cache, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", f"bfcl-eval=={BFCL_VERSION}",
             "--no-deps", "--only-binary=:all:", "-d", cache],
            check=True,
        )
    return path


def definition_key(desc, params):
    return json.dumps([desc, params], ensure_ascii=False, sort_keys=True)


def twin_key(name):
    """Names equal up to case and punctuation (math.factorial ~ math_factorial)."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def build_catalog(zf):
    # name -> {definition key -> [count, first-seen index, desc, params, category]}
    variants = collections.defaultdict(dict)
    seen = 0
    for cat in CATALOG_CATEGORIES:
        for q in read_jsonl(zf, f"BFCL_v4_{cat}.json"):
            for fn in q["function"]:
                name = fn["name"]
                desc = fn.get("description", "")
                params = normalise_parameters(fn["parameters"], f"{q['id']}:{name}")
                key = definition_key(desc, params)
                slot = variants[name].get(key)
                if slot is None:
                    variants[name][key] = [1, seen, desc, params, cat]
                else:
                    slot[0] += 1
                seen += 1

    tools = {}
    for name, defs in variants.items():
        if not NAME_RE.match(name):
            raise ValueError(f"name {name!r} does not match {NAME_RE.pattern}")
        # The definition given most often under this name; ties to the first seen.
        count, _, desc, params, cat = min(defs.values(), key=lambda s: (-s[0], s[1]))
        tools[name] = {
            "name": name,
            "namespace": None,
            "description": desc,
            "parameters": params,
            "source": f"bfcl-v4/{cat}",
        }

    for cls, filename in MULTI_TURN_CLASSES:
        for fn in read_jsonl(zf, f"multi_turn_func_doc/{filename}"):
            name = f"{cls}.{fn['name']}"
            if not NAME_RE.match(name):
                raise ValueError(f"name {name!r} does not match {NAME_RE.pattern}")
            if name in tools:
                raise ValueError(f"duplicate multi-turn tool {name}")
            tools[name] = {
                "name": name,
                "namespace": cls,
                "description": fn.get("description", ""),
                "parameters": normalise_parameters(fn["parameters"], name),
                "source": f"bfcl-v4/multi_turn_func_doc/{filename[:-5]}",
                "original_name": fn["name"],
            }
    return tools


def first_user_content(question):
    for turn in question:
        for message in turn:
            if message.get("role") == "user":
                return message.get("content")
    return None


def sample_key(qid):
    return hashlib.sha256(f"{REQUEST_SEED}:{qid}".encode("utf-8")).hexdigest()


def build_requests(zf, tools):
    twins = collections.Counter(twin_key(n) for n in tools)
    cat_rank = {c: i for i, c in enumerate(REQUEST_CATEGORIES)}
    eligible = []
    skipped = collections.Counter()
    for cat in REQUEST_CATEGORIES:
        answers = {a["id"]: a for a in read_jsonl(zf, f"possible_answer/BFCL_v4_{cat}.json")}
        for pos, q in enumerate(read_jsonl(zf, f"BFCL_v4_{cat}.json")):
            truth = answers[q["id"]]["ground_truth"]
            if len(truth) != 1 or len(truth[0]) != 1:
                skipped["not exactly one ground-truth call"] += 1
                continue
            expected = next(iter(truth[0]))
            query = first_user_content(q["question"])
            if not isinstance(query, str) or not query.strip():
                skipped["no user text"] += 1
                continue
            tool = tools.get(expected)
            if tool is None:
                skipped["expected not in catalog"] += 1
                continue
            given = [f for f in q["function"] if f["name"] == expected]
            if len(given) != 1:
                skipped["expected not offered once with the question"] += 1
                continue
            fn = given[0]
            params = normalise_parameters(fn["parameters"], f"{q['id']}:{expected}")
            if definition_key(fn.get("description", ""), params) != definition_key(
                tool["description"], tool["parameters"]
            ):
                skipped["question's definition differs from the catalog's"] += 1
                continue
            if twins[twin_key(expected)] > 1:
                skipped["expected has a same-name twin (case/punctuation)"] += 1
                continue
            eligible.append((sample_key(q["id"]), cat_rank[cat], pos, q["id"], query, expected))

    # Same text asked with different answers is ambiguous: drop all of it.
    answers_by_text = collections.defaultdict(set)
    for e in eligible:
        answers_by_text[e[4]].add(e[5])
    ambiguous = [e for e in eligible if len(answers_by_text[e[4]]) > 1]
    if ambiguous:
        skipped["same text, different expected tools"] += len(ambiguous)
        eligible = [e for e in eligible if len(answers_by_text[e[4]]) == 1]

    eligible.sort()
    passed_over = collections.Counter()
    per_tool = collections.Counter()
    texts = set()
    chosen = []
    for e in eligible:
        if len(chosen) == REQUEST_TARGET:
            break
        _, _, _, qid, query, expected = e
        if query in texts:
            passed_over["repeated text"] += 1
            continue
        if per_tool[expected] >= MAX_PER_TOOL:
            passed_over["tool already expected MAX_PER_TOOL times"] += 1
            continue
        per_tool[expected] += 1
        texts.add(query)
        chosen.append(e)
    chosen.sort(key=lambda e: (e[1], e[2]))
    requests = [
        {"query": query, "expected": expected, "source": f"bfcl-v4/{qid}"}
        for _, _, _, qid, query, expected in chosen
    ]
    stats = {
        "not_eligible": dict(sorted(skipped.items())),
        "eligible": len(eligible),
        "passed_over_while_sampling": dict(sorted(passed_over.items())),
    }
    return requests, stats


def render(rows):
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def check(catalog_bytes, requests_bytes):
    """Structural checks on the two files' bytes; returns a summary dict."""
    names = []
    for i, line in enumerate(catalog_bytes.decode("utf-8").splitlines(), 1):
        t = json.loads(line)
        assert set(t) <= {"name", "namespace", "description", "parameters", "source",
                          "original_name"}, (i, sorted(t))
        assert NAME_RE.match(t["name"]), (i, t["name"])
        assert t["namespace"] is None or isinstance(t["namespace"], str), i
        assert isinstance(t["description"], str) and isinstance(t["source"], str), i
        assert isinstance(t["parameters"], dict) and t["parameters"].get("type") == "object", i
        names.append(t["name"])
    assert len(names) == len(set(names)), "duplicate names in catalog"
    name_set = set(names)
    per_tool = collections.Counter()
    for i, line in enumerate(requests_bytes.decode("utf-8").splitlines(), 1):
        r = json.loads(line)
        assert set(r) == {"query", "expected", "source"}, (i, sorted(r))
        assert r["query"].strip(), i
        assert r["expected"] in name_set, (i, r["expected"])
        per_tool[r["expected"]] += 1
    assert max(per_tool.values()) <= MAX_PER_TOOL
    return {
        "tools": len(names),
        "requests": sum(per_tool.values()),
        "distinct_expected": len(per_tool),
        "max_per_tool": max(per_tool.values()),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheel", help=f"path to {BFCL_WHEEL}")
    ap.add_argument("--fetch", action="store_true", help="pip download the pinned wheel")
    ap.add_argument("--check", action="store_true",
                    help="compare with the files on disk instead of writing them")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args()

    cat_path = os.path.join(args.out, "catalog.jsonl")
    req_path = os.path.join(args.out, "requests.jsonl")
    if args.wheel:
        wheel = args.wheel
    elif args.fetch:
        wheel = fetch_wheel()
    elif args.check:
        # No source at hand: check the files' structure only.
        with open(cat_path, "rb") as c, open(req_path, "rb") as r:
            print(json.dumps(check(c.read(), r.read()), indent=2))
        print("structure ok (give --wheel or --fetch to compare with a fresh build)")
        return
    else:
        sys.exit(f"give --wheel PATH or --fetch (pip download bfcl-eval=={BFCL_VERSION} --no-deps)")

    with open_wheel(wheel) as zf:
        tools = build_catalog(zf)
        requests, stats = build_requests(zf, tools)

    catalog_bytes = render(tools[n] for n in sorted(tools))
    requests_bytes = render(requests)
    summary = check(catalog_bytes, requests_bytes)
    summary.update(stats)

    if args.check:
        on_disk = []
        for path in (cat_path, req_path):
            with open(path, "rb") as fh:
                on_disk.append(fh.read())
        check(*on_disk)  # the files on disk must pass the same checks
        print(json.dumps(summary, indent=2))
        ok = True
        for path, data, disk in ((cat_path, catalog_bytes, on_disk[0]),
                                 (req_path, requests_bytes, on_disk[1])):
            if disk != data:
                print(f"DIFFERS from a fresh build: {path}")
                ok = False
        print("identical to a fresh build" if ok else "NOT identical to a fresh build")
        sys.exit(0 if ok else 1)
    for path, data in ((cat_path, catalog_bytes), (req_path, requests_bytes)):
        with open(path, "wb") as fh:
            fh.write(data)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
