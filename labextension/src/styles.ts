/**
 * The extension's styles (badges, proposals, the Undo button, undone turns, the waiting
 * line, Fix with elelem), added to the page once.
 */

let styled = false;

export function addStyle(): void {
  if (styled) {
    return;
  }
  styled = true;
  const style = document.createElement('style');
  style.textContent = `
.elelem-agent-cell { position: relative; }
.elelem-agent-cell::after {
  content: 'elelem'; position: absolute; top: 26px; left: 8px; font-size: 10px;
  padding: 0 5px; border-radius: 6px; color: var(--jp-ui-inverse-font-color1, #fff);
  background: var(--jp-brand-color1, #1976d2); opacity: 0.75; pointer-events: none;
}
.elelem-proposal {
  margin: 4px 0 6px 64px; padding: 6px 8px; border: 1px solid var(--jp-brand-color1, #1976d2);
  border-radius: 4px; background: var(--jp-layout-color1, #fff);
  color: var(--jp-ui-font-color1, #000); font-size: var(--jp-ui-font-size1, 13px);
}
.elelem-proposal-title { font-weight: 600; margin-bottom: 4px; }
.elelem-proposal-diff { border: 1px solid var(--jp-border-color2, #ddd); margin-bottom: 4px;
  max-height: 420px; overflow: auto; font-family: var(--jp-code-font-family, monospace); }
.elelem-proposal-reason { width: 60%; margin-right: 8px; }
.elelem-proposal-buttons { display: inline-flex; gap: 6px; margin-top: 4px; }
.elelem-proposal-buttons button { padding: 2px 10px; cursor: pointer; }
.elelem-proposal-accept, .elelem-proposal-accept-all {
  background: var(--jp-success-color1, #388e3c); color: #fff; border: none; }
.elelem-proposal-reject, .elelem-proposal-reject-all {
  background: var(--jp-error-color1, #d32f2f); color: #fff; border: none; }
.elelem-deleting .jp-InputArea-editor { text-decoration: line-through; opacity: 0.55; }
.elelem-deleting .cm-content { text-decoration: line-through; }
.elelem-undo { margin: 2px 0 6px 0; padding: 2px 10px; cursor: pointer; border: none;
  border-radius: 3px; color: #fff; background: var(--jp-brand-color1, #1976d2); }
.elelem-undo:hover { background: var(--jp-brand-color0, #0d47a1); }
.elelem-turn-undone .jp-RenderedHTMLCommon { opacity: 0.55; }
.elelem-undone-note { margin: 4px 0 6px 0; padding: 4px 8px; white-space: pre-wrap;
  border-left: 3px solid var(--jp-warn-color1, #f57c00); font-size: var(--jp-ui-font-size1, 13px);
  color: var(--jp-ui-font-color1, #000); background: var(--jp-layout-color2, #f5f5f5); }
.elelem-waiting { margin: 2px 0 6px 0; color: var(--jp-warn-color1, #c77c00); }
.elelem-waiting-link { text-decoration: underline; margin-right: 10px; }
.elelem-fix { margin: 4px 0; padding: 2px 10px; cursor: pointer; }
`;
  document.head.appendChild(style);
}
