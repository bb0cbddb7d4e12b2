// The fusion view: the layer's ops as a chain of boxes (kind, CI / MI colour, shapes on
// hover) grouped into the scheme's segments, the binary code and its hex form; a click
// between two ops splits or joins segments (a refused join is explained); each segment's
// template, parameters and predicted or measured time and bytes; and the attention block's
// fusion ladder (U unfused, SD decomposed, SDF decomposed + fused, F fully fused) as latency
// and DRAM bytes bars, measured or predicted as the note above them says (each bar tagged
// when the two kinds are mixed). Reads and edits LayerWorkbench.
#pragma once

namespace stof::app {

class LayerWorkbench;
void DrawFusionPanel(LayerWorkbench& bench);
// The model / config.json / batch row shared with the tune view.
void DrawLayerChooser(LayerWorkbench& bench);
// The view's parts the Learn tab shows inside its lessons: the fusion ladder's bars and the
// segments table.
void DrawFusionLadder(LayerWorkbench& bench);
void DrawFusionSegments(const LayerWorkbench& bench);

}  // namespace stof::app
