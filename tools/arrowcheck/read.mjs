// read.mjs reads an Arrow IPC file written by `analyze slice` (or
// slice.Result.WriteTable) with the apache-arrow JavaScript implementation,
// independent of the Go one that wrote it, and prints it as JSON on stdout:
//
//   {"fields": [{"name", "type", "nullable"}...], "rows": N,
//    "data": [{"instance", "seq", "thread", "pc", "file", "line",
//              "function", "criterion",
//              "deps": [{"instance", "kind", "location"}...], "call_site"}...]}
//
// 64-bit integers are decimal strings (JSON numbers lose precision past
// 2^53); nulls are null. slice/arrow_test.go runs it and compares the JSON
// with what the Go side wrote, row by row.
//
// Usage: node tools/arrowcheck/read.mjs FILE.arrow
// Install its one dependency first: npm ci --prefix tools/arrowcheck
import { readFileSync } from "node:fs";
import { tableFromIPC } from "apache-arrow";

const file = process.argv[2];
if (!file) {
  process.stderr.write("usage: node read.mjs FILE.arrow\n");
  process.exit(2);
}
const table = tableFromIPC(readFileSync(file));

const u64 = (v) => (v === null || v === undefined ? null : BigInt(v).toString());
const num = (v) => (v === null || v === undefined ? null : Number(v));
const str = (v) => (v === null || v === undefined ? null : String(v));

const col = (name) => {
  const c = table.getChild(name);
  if (!c) {
    process.stderr.write(`read.mjs: no column ${name}\n`);
    process.exit(1);
  }
  return c;
};
const instance = col("instance"), seq = col("seq"), thread = col("thread"), pc = col("pc");
const fileCol = col("file"), line = col("line"), fn = col("function"), criterion = col("criterion");
const deps = col("deps"), callSite = col("call_site");

const data = [];
for (let i = 0; i < table.numRows; i++) {
  const ds = [];
  const list = deps.get(i);
  if (list !== null) {
    for (const d of list) {
      ds.push({ instance: u64(d.instance), kind: str(d.kind), location: str(d.location) });
    }
  }
  data.push({
    instance: u64(instance.get(i)),
    seq: u64(seq.get(i)),
    thread: num(thread.get(i)),
    pc: u64(pc.get(i)),
    file: str(fileCol.get(i)),
    line: num(line.get(i)),
    function: str(fn.get(i)),
    criterion: criterion.get(i),
    deps: ds,
    call_site: u64(callSite.get(i)),
  });
}

const out = {
  fields: table.schema.fields.map((f) => ({ name: f.name, type: String(f.type), nullable: f.nullable })),
  rows: table.numRows,
  data,
};
process.stdout.write(JSON.stringify(out) + "\n");
