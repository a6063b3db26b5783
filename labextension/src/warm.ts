/**
 * The page's widget code, loaded and run once before the first turn (issue 36 item 1).
 *
 * A turn's live view is ipywidgets (`HTML`, `VBox`, their layout and style:
 * `@jupyter-widgets/controls`), and JupyterLab's widget manager loads that package the
 * first time a model of it is made: its chunks fetched from the manager's extension and
 * evaluated, during the first turn after the page opened, on the path to everything that
 * turn shows. Here the page loads the same package (a shared singleton, package.json's
 * `sharedPackages`: the instance the manager provides, not a copy) once, when a notebook
 * first links an elelem kernel: no kernel message, nothing drawn. A page without
 * ipywidgets' manager loads nothing.
 *
 * Loaded is not yet run: the first turn's widget models and views still ran the manager's
 * and the views' code for the first time, and the page handled the turn's messages
 * ~15-30 ms later than a warm turn's. So the page then makes a small live view of its
 * own in the notebook's widget manager, with no kernel: a VBox of an HTML with their
 * layout and style, drawn off screen, its value changed once, and closed two frames later
 * (nothing stays in the manager, nothing reaches the kernel or the notebook).
 *
 * The same moment, it makes one diff box's view off screen and removes it two frames
 * later: a page's first merge view ran CodeMirror's code for the first time and mounted
 * its styles, ~8 ms more between the first `edit` request and its box than a later one.
 */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { diffView } from './proposal';

/** The module the page holds once loaded (tests read it: `window.__elelemWarm`). */
export interface IWarm {
  /** `loaded`, or why not (`unavailable` without the widget manager). */
  controls: 'loading' | 'loaded' | 'unavailable';
  /** ms the load took (performance.now() based). */
  ms: number;
  /** `made` once a diff view was made and removed off screen. */
  diff: 'no' | 'made';
  /** `made` once a live view's kinds of widget were drawn off screen and closed; or
   * `unavailable` (no widget manager, or one this page cannot reach). */
  views: 'no' | 'made' | 'unavailable';
}

/** What of the notebook's rendermime the warm-up uses. */
export interface IRenderers {
  createRenderer(mimeType: string): IRenderMime.IRenderer;
}

/** What of an ipywidgets model the warm-up uses. */
interface IWidgetModel {
  set(key: string, value: unknown): void;
  trigger(event: string): void;
  close(commClosed: boolean): Promise<void>;
}

/** ipywidgets' manager (`@jupyter-widgets/base-manager`): a model made with no comm. */
interface IWidgetManager {
  new_model(
    options: {
      model_name: string;
      model_module: string;
      model_module_version: string;
      model_id: string;
    },
    state: Record<string, unknown>
  ): Promise<IWidgetModel>;
}

/** JupyterLab's widget renderer holds its notebook's manager here (not public API, so
 * a page whose renderer has none is left unwarmed). */
interface IWithManager {
  _manager?: { promise?: Promise<IWidgetManager> };
}

const WIDGET_MIME = 'application/vnd.jupyter.widget-view+json';
const BASE = '@jupyter-widgets/base';
const CONTROLS = '@jupyter-widgets/controls';

let warming: Promise<void> | null = null;

/** Load `@jupyter-widgets/controls` once per page and run its views once, in the
 * widget manager of the notebook whose `rendermime` this is (later calls do nothing). */
export function warmWidgets(rendermime: IRenderers): void {
  if (warming) {
    return;
  }
  const state: IWarm = { controls: 'loading', ms: 0, diff: 'no', views: 'no' };
  (window as unknown as { __elelemWarm: IWarm }).__elelemWarm = state;
  warmDiff(state);
  const start = performance.now();
  warming = import('@jupyter-widgets/controls').then(
    () => {
      state.controls = 'loaded';
      state.ms = performance.now() - start;
      return warmViews(rendermime, state);
    },
    () => {
      state.controls = 'unavailable';
      state.views = 'unavailable';
    }
  );
}

/** Draw a VBox of an HTML off screen in the notebook's widget manager, then close it. */
async function warmViews(rendermime: IRenderers, state: IWarm): Promise<void> {
  const host = offScreen();
  const models: IWidgetModel[] = [];
  let renderer: IRenderMime.IRenderer | null = null;
  try {
    renderer = rendermime.createRenderer(WIDGET_MIME);
    const manager = await (renderer as unknown as IWithManager)._manager?.promise;
    if (!manager) {
      state.views = 'unavailable';
      return;
    }
    const tag = `elelem-warm-${Math.random().toString(36).slice(2)}-`;
    const ref = (key: string): string => `IPY_MODEL_${tag}${key}`;
    const make = async (
      name: string,
      module: string,
      key: string,
      widgetState: Record<string, unknown> = {}
    ): Promise<IWidgetModel> => {
      const options = { model_module: module, model_module_version: '2.0.0' };
      const model = await manager.new_model(
        { ...options, model_name: name, model_id: tag + key },
        widgetState
      );
      models.push(model);
      return model;
    };
    await make('LayoutModel', BASE, 'layout');
    await make('HTMLStyleModel', CONTROLS, 'style');
    const html = await make('HTMLModel', CONTROLS, 'html', {
      value: '<b>elelem</b>',
      layout: ref('layout'),
      style: ref('style')
    });
    await make('VBoxModel', CONTROLS, 'box', { children: [ref('html')], layout: ref('layout') });
    host.appendChild(renderer.node);
    const view = { model_id: tag + 'box', version_major: 2, version_minor: 0 };
    await renderer.renderModel({
      trusted: false,
      data: { [WIDGET_MIME]: view },
      metadata: {},
      setData: () => undefined
    });
    html.set('value', '<i>elelem</i>');
    await frames(2);
    state.views = host.querySelector('.widget-html') ? 'made' : 'unavailable';
  } catch (error) {
    state.views = 'unavailable';
    console.warn('elelem-kernel: no live view made ahead', error);
  } finally {
    renderer?.dispose();
    host.remove();
    for (const model of models.reverse()) {
      model.trigger('comm:close'); // the manager forgets it, as when its kernel closes it
      await model.close(true);
    }
  }
}

/** A hidden element out of view, in the page, for a view made ahead of need. */
function offScreen(): HTMLElement {
  const parent = document.createElement('div');
  parent.setAttribute('aria-hidden', 'true');
  parent.style.cssText = 'position: fixed; left: -10000px; top: 0; width: 400px;';
  document.body.appendChild(parent);
  return parent;
}

/** A promise of the `count`th animation frame from now. */
function frames(count: number): Promise<void> {
  return new Promise(resolve =>
    requestAnimationFrame(() => (count > 1 ? frames(count - 1).then(resolve) : resolve()))
  );
}

/** Make a diff view off screen, drawn once, then remove it. */
function warmDiff(state: IWarm): void {
  const parent = offScreen();
  let view: ReturnType<typeof diffView>;
  try {
    view = diffView(parent, 'a = 1\n', 'a = 2\n');
  } catch (error) {
    parent.remove(); // the first diff box makes its view then, as without this
    console.warn('elelem-kernel: no diff view made ahead', error);
    return;
  }
  void frames(2).then(() => {
    view.destroy();
    parent.remove();
    state.diff = 'made';
  });
}
