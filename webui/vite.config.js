// Builds the console into the jar's static resources; the server serves them at "/".
import { defineConfig } from 'vite';
import vue from '@vitejs/plugin-vue';

export default defineConfig({
  plugins: [vue()],
  base: '/',
  build: {
    // Maven packages target/classes into holdfast-webui.jar; Spring serves META-INF/resources.
    outDir: 'target/classes/META-INF/resources',
    // The server lets anonymous callers fetch /console/** only (the files hold no data).
    assetsDir: 'console',
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 400
  },
  server: {
    // `npm run dev` against a local server: `HOLDFAST_URL=https://127.0.0.1:8080 npm run dev`
    proxy: { '/api': { target: process.env.HOLDFAST_URL || 'https://127.0.0.1:8080', secure: false } }
  }
});
