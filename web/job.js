// job.js: the one helper for long work. A JobRunner owns a progress bar, a status line and a Cancel
// button; run(body) shows them, hands body a Job, and hides them when the job ends. The heavy part
// runs in the worker (job.request: wasm/worker.mjs's {id, progress: {stage, fraction}} messages move
// the bar; Cancel writes the worker's cancel board, see worker_client.js), so the page stays
// responsive; body draws between job.pause() calls, one task at a time.
//
//   const runner = new JobRunner({ client, bar, status, cancel, error });
//   const r = await runner.run(async (job) => {
//     const { reply, tensors } = await job.request('attention', args, { stageLabel: (s) => s });
//     await job.pause();           // a task boundary; throws if cancelled meanwhile
//     ...draw...
//   }, { label: 'Computing…' });
//   r: { ok: true, value } | { cancelled: true } | { superseded: true } | { error }
//
// A new run() supersedes the previous one (it is cancelled and its outcome ignored). The status line
// reads "<stage>: 40% — about 3 s left" while the worker reports, "Cancelled." after a cancel; on an
// error the status is cleared and the message goes to the error element (when given).
import { nextTask, setError, show } from './dom.js';

export class CancelledError extends Error {
  constructor() {
    super('cancelled');
    this.code = 'cancelled';
  }
}

// "about 3 s left" from the progress so far in this stage family (null while too early to tell).
export function remaining(elapsedMs, fractionDone) {
  if (elapsedMs < 300 || fractionDone < 0.01) return null;
  const left = (elapsedMs * (1 - fractionDone)) / fractionDone / 1000;
  if (left < 1) return 'less than a second left';
  if (left < 90) return `about ${Math.round(left)} s left`;
  return `about ${Math.round(left / 60)} min left`;
}

export class Job {
  constructor(runner) {
    this.runner = runner;
    this.cancelled = false;
    this.requestId = 0;
    this.abort = new AbortController();
    this.eta = null; // { family, t0, f0 }
  }

  get active() {
    return this.runner.current === this;
  }

  // An AbortSignal for fetches that belong to this job.
  get signal() {
    return this.abort.signal;
  }

  check() {
    if (this.cancelled || !this.active) throw new CancelledError();
  }

  async pause() {
    await nextTask();
    this.check();
  }

  status(text) {
    if (this.active && this.runner.statusEl) this.runner.statusEl.textContent = text;
  }

  // Moves the bar; text names the stage (digits ignored when grouping stages for the time left).
  // family, when given, groups reports for the time left instead (one family: the whole job).
  report(fraction, text, family = String(text).replace(/[\d.,]+/g, '#')) {
    if (!this.active) return;
    const f = Math.min(1, Math.max(0, Number(fraction) || 0));
    const now = performance.now();
    if (!this.eta || this.eta.family !== family || f < this.eta.last) this.eta = { family, t0: now, f0: f };
    this.eta.last = f;
    const span = 1 - this.eta.f0;
    const left = span > 0 ? remaining(now - this.eta.t0, (f - this.eta.f0) / span) : null;
    if (this.runner.bar) this.runner.bar.value = f;
    this.status(left ? `${text} \u2014 ${left}` : text);
  }

  // A worker request as part of this job. stageLabel(stage) names a stage for the user; stages, when
  // given, lists the stages that move the bar (others are ignored).
  // onProgress, when given, receives the worker's reports instead (and moves the bar itself).
  request(op, args, { transfer = [], stageLabel = (s) => s, stages = null, onProgress = null } = {}) {
    this.check();
    const pending = this.runner.client.request(op, args, {
      transfer,
      onProgress: onProgress ?? ((p) => {
        if (stages && !stages.includes(p.stage)) return;
        this.report(p.fraction, `${stageLabel(p.stage)}: ${Math.round(p.fraction * 100)}%`);
      }),
    });
    this.requestId = pending.id;
    return pending.promise;
  }

  cancel() {
    if (this.cancelled) return;
    this.cancelled = true;
    this.abort.abort();
    if (this.requestId) this.runner.client.cancel(this.requestId);
  }
}

export class JobRunner {
  constructor({ client, bar = null, status = null, cancel = null, error = null, onChange = () => {} }) {
    this.client = client;
    this.bar = bar;
    this.statusEl = status;
    this.cancelButton = cancel;
    this.errorEl = error;
    this.onChange = onChange;
    this.current = null;
    cancel?.addEventListener('click', () => this.cancel());
  }

  cancel() {
    this.current?.cancel();
  }

  async run(body, { label = 'Working\u2026' } = {}) {
    this.current?.cancel();
    const job = new Job(this);
    this.current = job;
    if (this.bar) {
      this.bar.value = 0;
      show(this.bar, true);
    }
    if (this.cancelButton) show(this.cancelButton, true);
    if (this.errorEl) setError(this.errorEl, null);
    job.status(label);
    this.onChange();
    try {
      const value = await body(job);
      if (!job.active) return { superseded: true };
      if (job.cancelled) {
        job.status('Cancelled.');
        return { cancelled: true };
      }
      return { ok: true, value };
    } catch (e) {
      if (!job.active) return { superseded: true };
      if (job.cancelled || e?.code === 'cancelled') {
        job.status('Cancelled.');
        return { cancelled: true };
      }
      job.status('');
      if (this.errorEl) setError(this.errorEl, e?.message ?? String(e));
      return { error: e };
    } finally {
      if (job.active) {
        this.current = null;
        if (this.bar) show(this.bar, false);
        if (this.cancelButton) show(this.cancelButton, false);
        this.onChange();
      }
    }
  }
}
