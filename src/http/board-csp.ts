/**
 * Bull Board's page under a Content-Security-Policy: its scripts, styles, images and API are its
 * own (`'self'`); its inline `<style>` element and `style="…"` attributes (the loading screen of
 * @bull-board/ui's `dist/index.ejs`) are allowed by their hashes, read from that template at
 * start-up; its JSON configuration block is data, not script. The template's Google Fonts
 * stylesheet is taken out of the page ({@link withoutRemoteFonts}): nothing is fetched from
 * another site, and the board falls back to the system's fonts.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** The template @bull-board/api renders, found as it finds it (from @bull-board/api's own location). */
function boardTemplate(): string {
  const fromHere = createRequire(import.meta.url);
  const fromApi = createRequire(fromHere.resolve('@bull-board/api'));
  return readFileSync(join(dirname(fromApi.resolve('@bull-board/ui/package.json')), 'dist/index.ejs'), 'utf8');
}

/** The hashes of the template's inline styles: each `<style>` element's text and each `style` attribute's value. */
export function inlineStyleHashes(template: string): string[] {
  const blocks = [...template.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
  const attributes = [...template.matchAll(/\sstyle="([^"]*)"/g)].map((m) => m[1]!);
  return [...new Set([...blocks, ...attributes].map(hash))];
}

/** The Content-Security-Policy of everything under `/queues`. */
export function boardCsp(template: string = boardTemplate()): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'unsafe-hashes' ${inlineStyleHashes(template).join(' ')}`,
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Bull Board's page without its remote font stylesheet (`<link href="https://fonts.googleapis.com/…">`). */
export function withoutRemoteFonts(html: string): string {
  return html.replace(/<link\b[^>]*\bhref="https:\/\/fonts\.(?:googleapis|gstatic)\.com\/[^"]*"[^>]*>\s*/g, '');
}
