/**
 * The page's widget code, loaded before the first turn (issue 36 item 1).
 *
 * A turn's live view is ipywidgets (`HTML`, `VBox`: `@jupyter-widgets/controls`), and
 * JupyterLab's widget manager loads that package the first time a model of it is made:
 * its chunks fetched from the manager's extension and evaluated, during the first turn
 * after the page opened, on the path to everything that turn shows. Here the page loads
 * the same package (a shared singleton, package.json's `sharedPackages`: the instance the
 * manager provides, not a copy) once, when a notebook first links an elelem kernel: no
 * kernel message, nothing drawn. A page without ipywidgets' manager loads nothing.
 *
 * The same moment, it makes one diff box's view off screen and removes it two frames
 * later: a page's first merge view ran CodeMirror's code for the first time and mounted
 * its styles, ~8 ms more between the first `edit` request and its box than a later one.
 */

import { diffView } from './proposal';

/** The module the page holds once loaded (tests read it: `window.__elelemWarm`). */
export interface IWarm {
  /** `loaded`, or why not (`unavailable` without the widget manager). */
  controls: 'loading' | 'loaded' | 'unavailable';
  /** ms the load took (performance.now() based). */
  ms: number;
  /** `made` once a diff view was made and removed off screen. */
  diff: 'no' | 'made';
}

let warming: Promise<void> | null = null;

/** Load `@jupyter-widgets/controls` once per page (later calls do nothing). */
export function warmWidgets(): void {
  if (warming) {
    return;
  }
  const state: IWarm = { controls: 'loading', ms: 0, diff: 'no' };
  (window as unknown as { __elelemWarm: IWarm }).__elelemWarm = state;
  warmDiff(state);
  const start = performance.now();
  warming = import('@jupyter-widgets/controls').then(
    () => {
      state.controls = 'loaded';
      state.ms = performance.now() - start;
    },
    () => {
      state.controls = 'unavailable';
    }
  );
}

/** Make a diff view off screen, drawn once, then remove it. */
function warmDiff(state: IWarm): void {
  const parent = document.createElement('div');
  parent.setAttribute('aria-hidden', 'true');
  parent.style.cssText = 'position: fixed; left: -10000px; top: 0; width: 400px;';
  document.body.appendChild(parent);
  let view: ReturnType<typeof diffView>;
  try {
    view = diffView(parent, 'a = 1\n', 'a = 2\n');
  } catch (error) {
    parent.remove(); // the first diff box makes its view then, as without this
    console.warn('elelem-kernel: no diff view made ahead', error);
    return;
  }
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      view.destroy();
      parent.remove();
      state.diff = 'made';
    })
  );
}
