/** Packages the page shares at run time and this extension only loads (warm.ts). */
declare module '@jupyter-widgets/controls';
