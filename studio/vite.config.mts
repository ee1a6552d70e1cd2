import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The studio's build: a single-page app served by the API at /studio (src/api/studio.ts).
 * Vite 8 compiles TSX itself (Oxc): JSX with React's automatic runtime, no plugin needed.
 * Output in studio/dist (git-ignored; in the npm package, see package.json `files`).
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/studio/',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1000,
    rollupOptions: {
      // React Router's "use client" markers mean nothing in a client-only bundle.
      onwarn: (warning, warn) => {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
      output: {
        // Cytoscape is needed by the entity view only; keeping it in its own chunk keeps the first load small.
        manualChunks: (id: string) => (id.includes('node_modules/cytoscape') ? 'cytoscape' : undefined),
      },
    },
  },
});
