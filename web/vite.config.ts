// The console's build: web/ → web/dist, hashed files under assets/, no inline scripts (the CSP forbids them).
import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react'

export default defineConfig({
  root: 'web',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Vite's modulepreload polyfill is bundled, not inlined; no inline assets so the CSP can stay strict.
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1000,
  },
})
