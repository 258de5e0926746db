/**
 * /docs renders with no internet access: a real HTTP server, headless Chromium (Debian's
 * /usr/bin/chromium or CHROMIUM_PATH) with every request to anything but the server aborted.
 * The page must show the operations, load its script from the server, and trip no CSP violation.
 * Screenshot: apps/server/test-results/docs-offline.png. Skipped with a notice when Chromium is absent.
 */
import { existsSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, type ServerType } from '@hono/node-server';
import { chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prerequisite } from '../../../scripts/test-prerequisites.mjs';
import { BUNDLED_DOCS_SCRIPT_PATH } from '../src/http/docs.js';
import { TEST_DIALECT } from './support/database.js';
import { createTestContext } from './support/context.js';

const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (p): p is string => !!p && existsSync(p),
);
const RESULTS_DIR = fileURLToPath(new URL('../test-results', import.meta.url));
const HAS_CHROMIUM = prerequisite({
  testFile: import.meta.url,
  tests: 'GET /docs offline in headless Chromium',
  missing: 'Chromium (Debian: `apt-get install -y chromium`; or set CHROMIUM_PATH)',
  present: !!CHROMIUM,
});

describe('GET /docs script source', () => {
  it('DOCS_SCRIPT_URL overrides the bundled script, and only its origin is added to the policy', async () => {
    const ctx = await createTestContext({
      DOCS_SCRIPT_URL: 'https://cdn.example.com/npm/@scalar/api-reference@1.72.1',
    });
    try {
      const res = await ctx.app.request('/docs');
      expect(await res.text()).toContain(
        '<script src="https://cdn.example.com/npm/@scalar/api-reference@1.72.1">',
      );
      expect(res.headers.get('content-security-policy')).toMatch(
        /script-src 'self' 'sha256-[A-Za-z0-9+/=]+' https:\/\/cdn\.example\.com;/,
      );
    } finally {
      await ctx.cleanup();
    }
  });
});

/** Whether "Authentication Required" and the auth type selector beside it (both visible) overlap. */
function authHeadingOverlap(
  page: Page,
): Promise<{ heading: boolean; selector: boolean; overlap: boolean }> {
  // A string: this package's TypeScript has no DOM types.
  return page.evaluate(`(() => {
    const shown = (el) => (el && el.getBoundingClientRect().width > 0 ? el.getBoundingClientRect() : null);
    const heading = shown([...document.querySelectorAll('[data-testid="auth-indicator"]')].find((el) => shown(el)));
    const selector = shown([...document.querySelectorAll('button')].find((el) => el.textContent.includes('bearerAuth') && shown(el)));
    const overlap = !!heading && !!selector && heading.left < selector.right && selector.left < heading.right && heading.top < selector.bottom && selector.top < heading.bottom;
    return { heading: !!heading, selector: !!selector, overlap };
  })()`);
}

describe.skipIf(!HAS_CHROMIUM)(`GET /docs offline in headless Chromium (${TEST_DIALECT})`, () => {
  let ctx: Awaited<ReturnType<typeof createTestContext>>;
  let server: ServerType;
  let origin: string;

  beforeAll(async () => {
    ctx = await createTestContext();
    await new Promise<void>((resolve) => {
      server = serve({ fetch: ctx.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve());
    });
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await ctx?.cleanup();
  });

  it('serves the reference UI script from the installed package, with a same-origin CSP', async () => {
    const docs = await fetch(`${origin}/docs`);
    const html = await docs.text();
    expect(html).toContain(`<script src="${BUNDLED_DOCS_SCRIPT_PATH}">`);
    expect(html).not.toMatch(/https:\/\/(cdn\.jsdelivr\.net|fonts\.)/);
    const csp = docs.headers.get('content-security-policy')!;
    expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
    expect(csp).not.toMatch(/https?:|unsafe-eval/);
    expect(csp).toContain("connect-src 'self'");

    const script = await fetch(`${origin}${BUNDLED_DOCS_SCRIPT_PATH}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await script.text()).length).toBeGreaterThan(100_000);
  });

  it(
    'renders the operations with every other host blocked, and saves a screenshot',
    { timeout: 120_000 },
    async () => {
      const browser = await chromium.launch({
        executablePath: CHROMIUM!,
        headless: true,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--no-first-run',
        ],
      });
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        const blocked: string[] = [];
        const cspViolations: string[] = [];
        await page.route('**/*', (route) => {
          const url = route.request().url();
          if (url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith('blob:'))
            return route.continue();
          blocked.push(url);
          return route.abort('internetdisconnected');
        });
        const consoleLines: string[] = [];
        page.on('pageerror', (err) => consoleLines.push(`pageerror: ${err.message}`));
        page.on('console', (message) => {
          consoleLines.push(`${message.type()}: ${message.text()}`);
          if (/Content Security Policy|Refused to/i.test(message.text()))
            cspViolations.push(message.text());
        });

        await page.goto(`${origin}/docs`, { waitUntil: 'domcontentloaded' });
        mkdirSync(RESULTS_DIR, { recursive: true });
        try {
          const visible = (text: string) =>
            expect
              .poll(() => page.getByText(text, { exact: true }).first().isVisible(), {
                timeout: 60_000,
              })
              .toBe(true);
          for (const text of [
            'Voxkey API',
            'Create an API token',
            'List API tokens',
            'Voice',
            'Webhooks',
          ])
            await visible(text);
          // The document's server is relative: the reference resolves it to this server, whatever its port.
          await visible(`${origin}/v1`);
          expect(await authHeadingOverlap(page)).toEqual({
            heading: true,
            selector: true,
            overlap: false,
          });
          // The sidebar opens one group at a time: open Voice and see its operations.
          await page.getByText('Voice', { exact: true }).first().click();
          for (const text of ['Enrol a user by voice', 'Verify a user by voice'])
            await visible(text);
        } catch (err) {
          await page.screenshot({ path: path.join(RESULTS_DIR, 'docs-offline-failed.png') });
          throw new Error(
            `the operations did not show (screenshot docs-offline-failed.png); console:\n${consoleLines.join('\n')}\nblocked: ${blocked.join(', ')}`,
            { cause: err },
          );
        }
        await page.screenshot({ path: path.join(RESULTS_DIR, 'docs-offline.png') });

        expect(cspViolations).toEqual([]);
        // Nothing the page needs lives elsewhere; anything it tried anyway was blocked and is listed here.
        if (blocked.length) console.warn(`docs-offline: blocked requests: ${blocked.join(', ')}`);
        expect(blocked.filter((u) => /\.(js|css|woff2?)(\?|$)/.test(u))).toEqual([]);
      } finally {
        await browser.close();
      }
    },
  );
});
