// A page's changes: run one, show the API's problem detail or a notice, then reload the page's data.
import { ref } from 'vue';

/** `act(fn, done)` runs `fn`, then shows `done` and calls `refresh`; a failure lands in `actionError`. */
export function useAction(refresh) {
  const actionError = ref(null);
  const notice = ref('');

  function clear() {
    actionError.value = null;
    notice.value = '';
  }

  async function act(fn, done) {
    clear();
    try {
      await fn();
      notice.value = done;
      await refresh();
    } catch (e) {
      actionError.value = e;
    }
  }

  return { actionError, notice, act, clear };
}
