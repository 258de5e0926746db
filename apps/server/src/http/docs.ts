import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { getHtmlDocument } from '@scalar/core/libs/html-rendering';
import { Hono } from 'hono';
import type { AppConfig } from '../config.js';
import type { AppEnv } from './types.js';

/** Where /docs loads the reference UI from unless DOCS_SCRIPT_URL says otherwise: this server. */
export const BUNDLED_DOCS_SCRIPT_PATH = '/docs/scalar.js';

/** The browser bundle of the installed @scalar/api-reference (the file its CDN URL serves). */
export function bundledDocsScriptFile(): string {
  const entry = createRequire(import.meta.url).resolve('@scalar/api-reference');
  return path.join(path.dirname(entry), 'browser', 'standalone.js');
}

/**
 * Scalar 1.47+ (loadable with DOCS_SCRIPT_URL) prints the auth selector's label "Selected Auth Type:"
 * as visible text, and the row squeezes "Authentication Required" under it at 1280 px: the heading
 * keeps its width and the selector wraps below it instead.
 */
const AUTH_HEADER_CSS = `
div:has(> button [data-testid="auth-indicator"]) { flex-wrap: wrap !important; }
button:has([data-testid="auth-indicator"]) { flex: 1 0 auto !important; }
`;

function renderDocsPage(scriptUrl: string): string {
  return getHtmlDocument({
    url: '/openapi.json',
    pageTitle: 'Voxkey API reference',
    cdn: scriptUrl,
    // Nothing from elsewhere: system fonts, no telemetry, no AI agent, no request proxy.
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: 'never',
    customCss: AUTH_HEADER_CSS,
    _integration: 'hono',
  } as Parameters<typeof getHtmlDocument>[0]);
}

/** A hash source for every inline script, so the policy needs no 'unsafe-inline' for scripts. */
function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
    (m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`,
  );
}

function contentSecurityPolicy(html: string, scriptUrl: string): string {
  const external = /^https?:\/\//i.test(scriptUrl) ? [new URL(scriptUrl).origin] : [];
  return [
    "default-src 'self'",
    `script-src 'self' ${[...inlineScriptHashes(html), ...external].join(' ')}`,
    // The UI sets style attributes and injects <style> elements at run time.
    "style-src 'self' 'unsafe-inline'",
    "font-src 'self' data:",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * GET /docs (the Scalar API reference of /openapi.json) and GET /docs/scalar.js (its script, from
 * the installed npm package), so the reference renders with no internet access. DOCS_SCRIPT_URL
 * loads the script from elsewhere instead (its origin is then allowed by the policy).
 */
export function docsRouter(config: Pick<AppConfig, 'DOCS_SCRIPT_URL'>) {
  const scriptUrl = config.DOCS_SCRIPT_URL ?? BUNDLED_DOCS_SCRIPT_PATH;
  const html = renderDocsPage(scriptUrl);
  const headers = {
    'Content-Security-Policy': contentSecurityPolicy(html, scriptUrl),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-cache',
  };
  let script: Buffer | undefined;

  return new Hono<AppEnv>()
    .get('/docs', (c) => c.html(html, 200, headers))
    .get(BUNDLED_DOCS_SCRIPT_PATH, (c) => {
      script ??= readFileSync(bundledDocsScriptFile());
      return c.body(new Uint8Array(script), 200, {
        'Content-Type': 'text/javascript; charset=utf-8',
        'Cache-Control': 'public, max-age=3600',
        'X-Content-Type-Options': 'nosniff',
      });
    });
}
