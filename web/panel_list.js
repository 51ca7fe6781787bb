// panel_list.js: every panel of the page, in one place. Importing a panel module registers it
// (panels.js); app.js and the node tests of the link (which need every panel's state keys) import
// this list. A new panel is one module and one line here (and, for a place in the navigation, one
// registerSection in its module: sections.js).
import './panel_nav.js';
import './panel_model.js';
import './panel_input.js';
import './panel_explorer.js';
import './panel_explain.js';
import './panel_display.js';
import './panel_analyses.js';
import './panel_papa.js';
import './panel_importance.js';
import './panel_lm.js';
import './panel_generate.js';
import './panel_lm_need.js';
