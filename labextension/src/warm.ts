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
 */

/** The module the page holds once loaded (tests read it: `window.__elelemWarm`). */
export interface IWarm {
  /** `loaded`, or why not (`unavailable` without the widget manager). */
  controls: 'loading' | 'loaded' | 'unavailable';
  /** ms the load took (performance.now() based). */
  ms: number;
}

let warming: Promise<void> | null = null;

/** Load `@jupyter-widgets/controls` once per page (later calls do nothing). */
export function warmWidgets(): void {
  if (warming) {
    return;
  }
  const state: IWarm = { controls: 'loading', ms: 0 };
  (window as unknown as { __elelemWarm: IWarm }).__elelemWarm = state;
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
