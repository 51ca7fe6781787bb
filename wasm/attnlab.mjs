// attnlab.mjs: a small JavaScript wrapper over the WASM exports (wasm/exports.c), used by the node
// tests now and by the Web Worker. Every C handle it creates is released before a call returns,
// except the session, which release() frees.
//
//   const api = await createApi(createAttnlab, { wasmBinary });   // factory from attnlab_wasm.js
//   api.addModel('bert', { 'config.json': bytes, 'vocab.txt': bytes, 'model.safetensors': bytes });
//   const { reply, tensors } = api.run({ op: 'attention', model: 'bert', text: 'hi' },
//                                      { C: { shape: [L, L], data: Float32Array } });
//   tensors.attentions -> { dtype: 'F32', shape: [NL, B, H, L, L], data: Float32Array }
//   api.release();
//
// run() never throws for a failed request: the reply is then { error: { code, message } }, as the
// C API returns it. addModel() and setTensor() throw an AttnlabError (code, message).

export class AttnlabError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'AttnlabError';
    this.code = code;
  }
}

const STATUS_NAMES = ['ok', 'io', 'format', 'unsupported', 'invalid', 'out_of_memory', 'cancelled'];

// The worker's entry: wasmBytes (ArrayBuffer or Uint8Array of attnlab_wasm.wasm) and the factory
// that attnlab_wasm.js defines (a classic worker's importScripts makes it a global).
export async function load(wasmBytes, factory = globalThis.createAttnlab, moduleOptions = {}, apiOptions = {}) {
  if (typeof factory !== 'function') throw new Error('attnlab: createAttnlab not loaded (import attnlab_wasm.js first)');
  return createApi(factory, { wasmBinary: wasmBytes, ...moduleOptions }, apiOptions);
}

// threads: the session's thread count (only the threaded build, attnlab_wasm_mt, can give more than
// one; docs/threads.md); omitted: the core's default. kernels: the kernel path (src/kernels/path.h), for a host
// that knows which GEMM tile its engine runs faster (wasm/worker.mjs); omitted: the core's default. Every path gives
// the same bits.
export async function createApi(factory, moduleOptions = {}, { threads = 0, kernels = null } = {}) {
  const mod = await factory(moduleOptions);
  return new AttnlabApi(mod, threads, kernels);
}

export class AttnlabApi {
  constructor(mod, threads = 0, kernels = null) {
    this.mod = mod;
    if (kernels) {
      const name = this._string(kernels);
      const status = mod._al_wasm_set_kernels(name);
      mod._free(name);
      this._check(status);
    }
    this.session = threads > 0 ? mod._al_wasm_session_new_threads(threads) : mod._al_wasm_session_new();
    if (!this.session) throw new AttnlabError('out_of_memory', 'session: out of memory');
    this.version = mod.UTF8ToString(mod._al_wasm_version());
    this.kernels = mod.UTF8ToString(mod._al_wasm_kernels());
    this.threads = mod._al_wasm_session_threads(this.session);
  }

  // Copies a JS string into linear memory; the caller frees the pointer.
  _string(text) {
    const size = this.mod.lengthBytesUTF8(text) + 1;
    const ptr = this.mod._malloc(size);
    if (!ptr) throw new AttnlabError('out_of_memory', 'out of memory for a string');
    this.mod.stringToUTF8(text, ptr, size);
    return ptr;
  }

  // what names the bytes in the error when they do not fit in the WASM memory (docs/memory.md).
  _bytes(view, what = 'input') {
    const bytes = view instanceof Uint8Array ? view : new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    const ptr = this.mod._malloc(Math.max(bytes.length, 1));
    if (!ptr) throw this._memoryError(bytes.length, what);
    this.mod.HEAPU8.set(bytes, ptr); // HEAPU8 is re-read after malloc: memory may have grown
    return ptr;
  }

  // The core's out-of-memory error for bytes JavaScript could not allocate: it names the size and
  // the limit. When even the name's few bytes do not fit, the error says "input".
  _memoryError(size, what) {
    const m = this.mod;
    const size8 = m.lengthBytesUTF8(String(what)) + 1;
    const ptr = m._malloc(size8);
    if (ptr) m.stringToUTF8(String(what), ptr, size8);
    m._al_wasm_memory_error(size, ptr);
    if (ptr) m._free(ptr);
    return this._lastError();
  }

  _lastError() {
    const code = this.mod._al_wasm_last_error_code();
    return new AttnlabError(STATUS_NAMES[code] ?? String(code),
                            this.mod.UTF8ToString(this.mod._al_wasm_last_error_message()));
  }

  _check(status) {
    if (status !== 0) throw this._lastError();
  }

  // files: { name: Uint8Array | ArrayBuffer } in Hugging Face layout. Replaces a model of that id.
  addModel(id, files) {
    const m = this.mod;
    const fs = m._al_wasm_fileset_new();
    if (!fs) throw this._lastError();
    let handed = false;
    try {
      for (const [name, content] of Object.entries(files)) {
        const bytes = content instanceof ArrayBuffer ? new Uint8Array(content) : content;
        const namePtr = this._string(name);
        let dataPtr = 0;
        try {
          dataPtr = this._bytes(bytes, name);
          this._check(m._al_wasm_fileset_add(fs, namePtr, dataPtr, bytes.length));
        } finally {
          m._free(namePtr);
          if (dataPtr) m._free(dataPtr);
        }
      }
      const idPtr = this._string(id);
      handed = true; // al_wasm_add_model takes the fileset whatever the outcome
      try {
        this._check(m._al_wasm_add_model(this.session, idPtr, fs));
      } finally {
        m._free(idPtr);
      }
    } finally {
      if (!handed) m._al_wasm_fileset_free(fs);
    }
  }

  // A named float32 input for requests (e.g. a PAPA constant matrix), kept until clearTensors().
  setTensor(name, shape, data) {
    const m = this.mod;
    const floats = data instanceof Float32Array ? data : Float32Array.from(data);
    const count = shape.reduce((a, b) => a * b, 1);
    if (count !== floats.length) {
      throw new AttnlabError('invalid', `tensor '${name}': shape [${shape}] needs ${count} values, got ${floats.length}`);
    }
    const namePtr = this._string(name);
    const shapePtr = this._bytes(new Int32Array(shape));
    const dataPtr = this._bytes(floats, `tensor '${name}'`);
    try {
      this._check(m._al_wasm_set_tensor(this.session, namePtr, shape.length, shapePtr, dataPtr));
    } finally {
      m._free(namePtr);
      m._free(shapePtr);
      m._free(dataPtr);
    }
  }

  clearTensors() {
    this.mod._al_wasm_clear_tensors(this.session);
  }

  // The cancellation flag in linear memory: set it (e.g. from onProgress) to stop a running request.
  cancel() {
    this.mod.HEAP32[this.mod._al_wasm_cancel_flag_ptr() >> 2] = 1;
  }

  set onProgress(fn) {
    this.mod.onProgress = fn;
  }

  // request: object or JSON text; inputs: { name: { shape, data } } attached for this run, after
  // which every attached tensor (setTensor ones included) is cleared.
  run(request, inputs = null) {
    const m = this.mod;
    const text = typeof request === 'string' ? request : JSON.stringify(request);
    const names = inputs ? Object.keys(inputs) : [];
    for (const name of names) this.setTensor(name, inputs[name].shape, inputs[name].data);
    m.HEAP32[m._al_wasm_cancel_flag_ptr() >> 2] = 0;
    const reqPtr = this._string(text);
    let handle = 0;
    try {
      handle = m._al_wasm_run(this.session, reqPtr);
      if (!handle) throw this._lastError();
      const status = m._al_wasm_reply_status(handle);
      const jsonPtr = m._al_wasm_reply_json(handle);
      const reply = jsonPtr ? JSON.parse(m.UTF8ToString(jsonPtr))
                            : { error: { code: 'out_of_memory', message: 'reply: out of memory' } };
      const tensors = {};
      const n = m._al_wasm_reply_n_tensors(handle);
      for (let i = 0; i < n; i++) {
        const name = m.UTF8ToString(m._al_wasm_reply_tensor_name(handle, i));
        const dtype = m.UTF8ToString(m._al_wasm_reply_tensor_dtype(handle, i));
        const ndim = m._al_wasm_reply_tensor_ndim(handle, i);
        const shape = [];
        for (let d = 0; d < ndim; d++) shape.push(m._al_wasm_reply_tensor_dim(handle, i, d));
        const ptr = m._al_wasm_reply_tensor_data(handle, i);
        const nbytes = m._al_wasm_reply_tensor_nbytes(handle, i);
        // Copy out of linear memory: the reply is freed below and the heap may grow later.
        const bytes = m.HEAPU8.slice(ptr, ptr + nbytes);
        const data = dtype === 'I32' ? new Int32Array(bytes.buffer) : new Float32Array(bytes.buffer);
        tensors[name] = { dtype, shape, data };
      }
      return { status, reply, tensors };
    } finally {
      if (handle) m._al_wasm_reply_free(handle);
      m._free(reqPtr);
      if (names.length) this.clearTensors();
    }
  }

  // Handles (sessions, filesets, replies) alive in the module: 1 (this session) when nothing leaks.
  liveHandles() {
    return this.mod._al_wasm_live_handles();
  }

  release() {
    if (this.session) this.mod._al_wasm_session_free(this.session);
    this.session = 0;
    this.mod.alTerminateWorkers?.(); // the threaded module's idle Workers (wasm/threads_post.js)
  }
}
