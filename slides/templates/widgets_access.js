// Included (as a Jinja template, so no double braces here) in a <script> of the decks (rnns/) and
// the HTML exports (rnns-html/). The widgets are drawn by @jupyter-widgets/html-manager from the
// saved widget state, asynchronously and after the page has loaded, with no accessible names on
// their controls; this names them, and keeps naming what is drawn later, so that a screen reader
// says "weight_ih_l0[0,0], slider, 0.5" and not just "slider" (WCAG 4.1.2, 1.1.1).
// - A slider's handle (a div with role=slider), its readout (a contenteditable div) and any other
//   control of a widget with no name of its own get aria-label from the widget's description label.
// - A slider's handle tells the value its readout shows (aria-valuenow, aria-valuetext).
// - The explorer's plot (an ipywidgets Image, drawn as img.widget-image) gets alt from its title,
//   which holds the description of the plotted data that helpers puts in the Image's tooltip.
//   Without a title it gets no alt: the accessibility test must then fail, not be quieted.
// - A disabled slider's handle is aria-disabled and out of the Tab order.
// - The figure's description in words (an HTML widget with the class rnns-figure-description)
//   is a polite live region: a screen reader reads it when the plot changes.
(function () {
  "use strict";
  var CONTROLS = 'input, select, textarea, button, [role="slider"], [contenteditable="true"]';

  // The label's words as a screen reader would say them: maths typeset by MathJax counts once
  // (its MathML copy, not the glyphs drawn for the eye, which are aria-hidden).
  function spoken(label) {
    var copy = label.cloneNode(true);
    copy.querySelectorAll('[aria-hidden="true"], .MathJax_Preview, script').forEach(function (e) {
      e.remove();
    });
    return copy.textContent.replace(/\s+/g, " ").trim();
  }

  function named(control) {
    return (
      control.hasAttribute("aria-label") ||
      control.hasAttribute("aria-labelledby") ||
      (control.labels && control.labels.length > 0) ||
      (control.tagName === "BUTTON" && control.textContent.trim() !== "")
    );
  }

  function nameControls(root) {
    root.querySelectorAll(".widget-label").forEach(function (label) {
      // html-manager writes a missing tooltip as the word "null", which a screen reader would read.
      if (label.getAttribute("title") === "null") label.removeAttribute("title");
      var widget = label.parentElement;
      var words = spoken(label);
      if (!widget || !words) return;
      widget.querySelectorAll(CONTROLS).forEach(function (control) {
        // A name set here is kept up to date; a name the widget has itself is left alone.
        var ours = control.hasAttribute("data-rnns-named");
        if (!ours && named(control)) return;
        var name = control.classList.contains("widget-readout") ? words + " (value)" : words;
        if (control.getAttribute("aria-label") !== name) control.setAttribute("aria-label", name);
        control.setAttribute("data-rnns-named", "");
      });
    });
  }

  // A slider moved from the keyboard shows its new value in the readout, but noUiSlider leaves the
  // handle's aria-valuenow at the old one: the value a screen reader reads follows the readout.
  function followValues(root) {
    root.querySelectorAll(".widget-slider").forEach(function (widget) {
      var handle = widget.querySelector('.noUi-handle[role="slider"]');
      var readout = widget.querySelector(".widget-readout");
      if (!handle || !readout) return;
      var shown = readout.textContent.trim();
      var value = parseFloat(shown.replace("\u2212", "-"));  // the readout writes a Unicode minus
      if (shown && handle.getAttribute("aria-valuetext") !== shown) handle.setAttribute("aria-valuetext", shown);
      if (!isNaN(value) && handle.getAttribute("aria-valuenow") !== String(value)) {
        handle.setAttribute("aria-valuenow", String(value));
      }
    });
  }

  function describeImages(root) {
    root.querySelectorAll("img.widget-image[title]").forEach(function (image) {
      var title = image.getAttribute("title").trim();
      if (title && image.getAttribute("alt") !== title) image.setAttribute("alt", title);
    });
  }

  function announceDescriptions(root) {
    root.querySelectorAll(".rnns-figure-description .widget-html-content").forEach(function (content) {
      // The helpers' HTML may hold its own live region: one is enough (nested ones are read twice).
      if (!content.hasAttribute("aria-live") && !content.querySelector("[aria-live]")) {
        content.setAttribute("aria-live", "polite");
      }
    });
  }

  // A disabled slider (every slider of a deck or page: slides/build.py saves them disabled, as nothing
  // could redraw their plot) says so, and leaves the Tab order: noUiSlider keeps its handle focusable.
  function readOnly(root) {
    root.querySelectorAll('.noUi-target[disabled] .noUi-handle[role="slider"]').forEach(function (handle) {
      if (handle.getAttribute("tabindex") !== "-1") handle.setAttribute("tabindex", "-1");
      if (handle.getAttribute("aria-disabled") !== "true") handle.setAttribute("aria-disabled", "true");
    });
  }

  function update() {
    readOnly(document);
    nameControls(document);
    followValues(document);
    describeImages(document);
    announceDescriptions(document);
  }

  var queued = false;
  function later() {
    if (queued) return;
    queued = true;
    setTimeout(function () {
      queued = false;
      update();
    }, 0);
  }

  function start() {
    update();
    new MutationObserver(later).observe(document.body, {
      childList: true,
      characterData: true,  // a readout's new value
      subtree: true,
      attributes: true,
      attributeFilter: ["title"],
    });
  }

  if (document.body) start();
  else document.addEventListener("DOMContentLoaded", start);
})();
