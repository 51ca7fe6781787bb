// page_provenance.js: the provenance of an export made in the page, by provenance.js's one rule: the
// engine version the worker reported, the link that reopens the page as it is now, and the model in use
// (its name and the state's reference); facts: the export's own (what it shows). The explorer's exports
// and every compute panel's without a rule of its own (the analyses) call it; PAPA's adds the sweep's
// hashes and settings (papa_record.js provenanceOf) to the same fields.
import { describeSource } from './model_ref.js';
import { provenance } from './provenance.js';
import { state } from './state.js';

export async function pageProvenance(ctx, facts = {}) {
  const engine = (await ctx.client.ready.catch(() => null))?.reply?.version ?? null;
  const source = ctx.models.current()?.source;
  return provenance({
    engine, link: ctx.link?.refused ? null : location.href,
    model: { name: source ? describeSource(source) : null, ref: state.model ?? null }, ...facts,
  });
}
