/**
 * Rendered list pages kept as JSON text until the store is next written to. A management listing re-reads,
 * decorates, renders and serialises its page on every request (a search answering 100 identities
 * of 153 kB cost 5 ms of the event loop each time); an administrator's console or a script polling the same
 * listing sees the same bytes until something changes, so the text is kept and answered as is.
 *
 * Exactness: a page is answered only while no write but an API session's activity touch has run since it was
 * rendered (the store's change feed, `anyDeps`: its decorations may read any table) and the clock has not
 * reached the earliest time its records change by themselves (the resource's `pagesValidUntil` hook: e.g. a
 * lock that ends, a trace that stops). A page rendered while a write ran is not kept. Only resources with that
 * hook opt in: their decorations read the store and the clock, nothing held elsewhere in memory. Reads in a
 * transaction neither use nor fill the cache.
 */
import type { Ctx } from './ctx.js';
import { JsonText } from './json-text.js';
import type { ResourceHooks, Row } from './resource.js';
import { FeedCache } from '../store/feed-cache.js';
import { defineCache, storeCache } from '../store/runtime.js';

/** Bound on the kept text (each page's text is counted twice: the string and its encoded envelope). */
const MAX_BYTES = 16 * 1024 * 1024;
const MAX_PAGES = 256;

interface Kept {
  until: number;
  data: JsonText;
  meta: Record<string, unknown>;
}

export const RENDERED_PAGES = defineCache(
  'rendered-pages',
  (feed) => new FeedCache<Kept>(feed, { maxEntries: MAX_PAGES, maxWeight: MAX_BYTES }),
);

export interface RenderedPage {
  /** The page's records, rendered (what the `data` of the answer holds). */
  records: unknown[];
  /** The decorated rows they were rendered from (for `pagesValidUntil`). */
  rows: Row[];
  meta: Record<string, unknown>;
}

/**
 * The page for `key` (the listing's resource and every request parameter that shapes it), from the kept text
 * when still exact, else built by `build`. Answers the records as JSON text when the resource opts in.
 */
export async function keptPage(
  ctx: Ctx,
  hooks: ResourceHooks,
  key: string,
  build: () => Promise<RenderedPage>,
): Promise<{ data: unknown; meta: Record<string, unknown> }> {
  const pages = hooks.pagesValidUntil ? storeCache(ctx.db, RENDERED_PAGES) : undefined;
  if (!pages) {
    const page = await build();
    return { data: page.records, meta: page.meta };
  }
  const deps = pages.feed.anyDeps;
  const version = pages.feed.version(deps);
  const now = ctx.now();
  // Most recently used last, so the bound evicts the coldest page.
  const kept = pages.get(key, true);
  if (kept && now.getTime() < kept.until) return { data: kept.data, meta: kept.meta };
  const page = await build();
  const data = new JsonText(JSON.stringify(page.records));
  const weight = 2 * data.text.length;
  // A page heavier than a quarter of the bound is not kept (it would push out most of the others).
  if (weight <= MAX_BYTES / 4) {
    const until = hooks.pagesValidUntil!(page.rows, now);
    pages.set(key, deps, version, { until, data, meta: page.meta }, weight);
  } else pages.delete(key);
  return { data, meta: page.meta };
}
