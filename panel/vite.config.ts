import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import tailwindcss from '@tailwindcss/vite';
import { tanstackRouter } from '@tanstack/router-plugin/vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// `npm run dev`: this dev server (hot reload) in front of the service on :3000 (API_ORIGIN).
export default defineConfig({
  root: here('.'),
  plugins: [
    tanstackRouter({ target: 'react', autoCodeSplitting: true, routesDirectory: here('./src/routes'), generatedRouteTree: here('./src/routeTree.gen.ts') }),
    react(),
    tailwindcss(),
  ],
  build: { outDir: here('./dist'), emptyOutDir: true, chunkSizeWarningLimit: 700 },
  server: {
    port: 5173,
    proxy: { '/api': { target: process.env.API_ORIGIN ?? 'http://localhost:3000' }, '/media': { target: process.env.API_ORIGIN ?? 'http://localhost:3000' } },
  },
});
