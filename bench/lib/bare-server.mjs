// The baseline for bench:load: a bare Hono route on @hono/node-server, no middleware, no database.
// Plain JavaScript run with `node` (like `voxkey serve`), so both servers run with the same settings.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono().get('/bare', (c) => c.json({ ok: true }));
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
  console.log(`bare listening on http://127.0.0.1:${info.port}`);
});
process.on('SIGTERM', () => process.exit(0));
