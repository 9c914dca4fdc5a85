// Whether a picture's words can be read: no text past the edge of its canvas, none over another.
// An SVG says where each text starts, not how wide it is (the viewer's font decides), so the width
// is estimated from a common sans-serif's advance widths, on the wide side; the writers of
// pictures (svg.cpp, the tutorial's programs) place what depends on a label's length with the same
// estimate, and the tutorial's figures are all checked with it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gradformer {

/// About how wide `text` (UTF-8) is, in pixels, at `font_size` px in a sans-serif font: Arial's
/// advance widths scaled up by a tenth (about DejaVu Sans's, the widest of the usual defaults),
/// a character past ASCII as wide as an 'o', one of the wide scripts (CJK, emoji) a whole em.
double text_width(std::string_view text, double font_size, bool bold = false);

/// The problems of an SVG document's texts, one line each ("text 'loss' (x 600, y 40) runs past
/// the right edge: it ends at 655 of 640"; "text 'a' (...) overlaps text 'b' (...)"): each <text>
/// placed by its x, y, text-anchor, font-size and font-weight (its own, else the nearest enclosing
/// <g>'s or <svg>'s, else 16 px), its box from 0.8 em above the baseline to 0.25 em below. A text
/// rotated by transform="rotate(a x y)" is checked against the canvas only (slanted labels side by
/// side have boxes that meet while their letters do not). Boxes that meet by under a pixel pass.
std::vector<std::string> svg_layout_problems(std::string_view svg);

}  // namespace gradformer
