import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Router } from 'express';
import { PACKAGE_ROOT } from '../package-info';
import { HttpError } from './errors';

/** Where `npm run build:studio` (studio/build.mjs) writes the studio: studio/dist of the package. */
export const STUDIO_DIR = join(PACKAGE_ROOT, 'studio', 'dist');

// The studio keeps an API key in sessionStorage: it loads nothing from elsewhere, and no other site may frame it.
const CSP = "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The studio's static files at /studio, without authentication (the app signs in with a key
 * and calls /v1 like any client). Hashed assets are cached for a year (immutable); index.html
 * is revalidated every time, so a new build is picked up at once. Any other path under
 * /studio is a client-side route: it gets index.html. When the studio was not built, 404
 * with the command that builds it.
 */
export function studioRouter(dir: string = STUDIO_DIR): Router {
  const router = express.Router();
  router.use((req, res, next) => {
    // "/studio" itself: relative asset paths need the trailing slash.
    if (req.originalUrl.split('?')[0] === '/studio') return res.redirect(301, '/studio/');
    res.setHeader('Content-Security-Policy', CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });
  router.use('/assets', express.static(join(dir, 'assets'), { index: false, immutable: true, maxAge: '365d' }), (req, _res, next) =>
    next(new HttpError(404, 'NOT_FOUND', `no studio asset ${req.path}; the page may be older than the build: reload it`)),
  );
  router.get('/{*path}', (_req, res, next) => {
    const index = join(dir, 'index.html');
    if (!existsSync(index)) return next(new HttpError(404, 'STUDIO_NOT_BUILT', 'the studio is not built; run `npm run build:studio` (npm start builds it when missing)'));
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  return router;
}
