// Live updates by polling: the lists and progress refresh on their own while the page is shown.
import { ref, onMounted, onBeforeUnmount } from 'vue';

/**
 * Runs `load` now and every `intervalMs` while the component is mounted and the tab visible.
 * `data` holds the last answer, `error` the last failure (an ApiError), `refresh()` reloads now.
 */
export function usePoll(load, intervalMs = 2000) {
  const data = ref(null);
  const error = ref(null);
  const loading = ref(true);
  let timer = null;
  let running = false;
  let stopped = false;

  async function refresh() {
    if (running) return;
    running = true;
    try {
      data.value = await load();
      error.value = null;
    } catch (e) {
      error.value = e;
    } finally {
      running = false;
      loading.value = false;
    }
  }

  function tick() {
    if (stopped) return;
    if (document.visibilityState !== 'hidden') refresh();
    timer = setTimeout(tick, intervalMs);
  }

  onMounted(() => {
    refresh();
    timer = setTimeout(tick, intervalMs);
  });
  onBeforeUnmount(() => {
    stopped = true;
    clearTimeout(timer);
  });
  return { data, error, loading, refresh };
}
