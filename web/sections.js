// sections.js: the page's sections, the places its navigation (panel_nav.js) leads to, registered like
// panels.js's panels: a panel that wants a place in the navigation registers one section here, in its
// own module, and the navigation, the section's address (#<id>, or the link's "section" key) and the
// link's check of that key follow. No DOM access: node tests import this module (through panel_list.js).
//
// A section: {
//   id       its address: a link opens it with #<id> (lower-case letters and hyphens), and the page state's
//            "section" key holds it
//   label    the navigation's words for it (short: the bar fits a phone's width by scrolling sideways)
//   element  the id of the element it leads to (default: id); it may be created later by its panel's mount
//   order    place in the navigation (default 50; the panels' orders, panels.js, keep the page's order)
//   title    optional: a longer description (the entry's tooltip)
// }

const registry = [];

export const SECTION_ID = /^[a-z][a-z-]{0,39}$/;

export function registerSection(section) {
  if (!SECTION_ID.test(section.id)) throw new Error(`section id "${section.id}" is not lower-case letters and hyphens`);
  if (registry.some((s) => s.id === section.id)) throw new Error(`section ${section.id} registered twice`);
  registry.push({ order: 50, element: section.id, ...section });
  registry.sort((a, b) => a.order - b.order);
}

export function allSections() {
  return [...registry];
}

export function sectionOf(id) {
  return registry.find((s) => s.id === id);
}
