"""Render a cdlab snapshot with ParaView from the XDMF sidecar (run with pvpython).

    xvfb-run -a pvpython tools/render.py OUT.xmf --png OUT.png [--time T] [--size 1200 800]

Particles are spheres of their radius coloured by speed; contacts are lines from body 0's end
to body 1's centre coloured by the contact force magnitude (only those carrying a force). The default time is the last
snapshot. Debian's pvpython is built against X: without a display its offscreen mode crashes,
hence xvfb-run (`make render` does all of this). Exits non-zero when the file has no
snapshots, the rendered time has no particles, or the image comes out blank.
"""
import argparse
import sys

from paraview import servermanager as sm
from paraview.simple import (ColorBy, ExtractBlock, GetActiveViewOrCreate, GetColorTransferFunction,
                             GetScalarBar, Glyph, Render, SaveScreenshot, Show, Threshold, XDMFReader)
from vtkmodules.vtkIOImage import vtkPNGReader


def label_bar(bar, title):
    bar.Title = title
    bar.ComponentTitle = ""
    bar.TitleColor = [0.0, 0.0, 0.0]
    bar.LabelColor = [0.0, 0.0, 0.0]
    bar.TitleFontSize = 18
    bar.LabelFontSize = 16


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("xmf")
    ap.add_argument("--png", required=True)
    ap.add_argument("--time", type=float, default=None, help="snapshot time (default: last)")
    ap.add_argument("--size", type=int, nargs=2, default=[1200, 800])
    a = ap.parse_args()

    reader = XDMFReader(FileNames=[a.xmf])
    times = list(reader.TimestepValues or [0.0])
    if not times:
        sys.exit(f"render: {a.xmf}: no snapshots")
    t = times[-1] if a.time is None else min(times, key=lambda x: abs(x - a.time))
    parts = ExtractBlock(Input=reader, Selectors=["/Root/particles"])
    conts = ExtractBlock(Input=reader, Selectors=["/Root/contacts"])
    parts.UpdatePipeline(t)
    conts.UpdatePipeline(t)
    n = parts.GetDataInformation().GetNumberOfPoints()
    nc = conts.GetDataInformation().GetNumberOfCells()
    if n == 0:
        sys.exit(f"render: {a.xmf}: no particles at t = {t}")
    bounds = parts.GetDataInformation().GetBounds()
    flat = bounds[5] - bounds[4] < 1e-12  # dimension 1 or 2: look along z

    view = GetActiveViewOrCreate("RenderView")
    view.ViewSize = a.size
    view.ViewTime = t
    view.Background = [1.0, 1.0, 1.0]
    view.OrientationAxesVisibility = 0
    try:  # ParaView >= 5.10 uses a palette unless told otherwise
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass

    glyph = Glyph(Input=parts, GlyphType="Sphere")
    glyph.ScaleArray = ["POINTS", "radius"]
    glyph.ScaleFactor = 2.0  # the unit sphere source has diameter 1
    glyph.GlyphMode = "All Points"
    glyph.OrientationArray = ["POINTS", "No orientation array"]
    glyph.GlyphType.ThetaResolution = 24
    glyph.GlyphType.PhiResolution = 16
    gd = Show(glyph, view)
    glyph.UpdatePipeline(t)
    ColorBy(gd, ("POINTS", "velocity", "Magnitude"))
    gd.RescaleTransferFunctionToDataRange(True, False)
    lut = GetColorTransferFunction("velocity")
    lut.ApplyPreset("Cool to Warm", True)
    gd.SetScalarBarVisibility(view, True)
    label_bar(GetScalarBar(lut, view), "speed")
    gd.Opacity = 0.45 if nc > 0 else 1.0

    active = 0
    if nc > 0:  # the contacts that carry a force
        loaded = Threshold(Input=conts, Scalars=["CELLS", "force_magnitude"])
        loaded.LowerThreshold = 1e-300
        loaded.UpperThreshold = 1e300
        loaded.UpdatePipeline(t)
        active = loaded.GetDataInformation().GetNumberOfCells()
    if active > 0:
        cd = Show(loaded, view)
        cd.SetRepresentationType("Surface")
        cd.LineWidth = 4.0
        ColorBy(cd, ("CELLS", "force_magnitude"))
        cd.RescaleTransferFunctionToDataRange(True, False)
        GetColorTransferFunction("force_magnitude").ApplyPreset("Black-Body Radiation", True)
        cd.SetScalarBarVisibility(view, True)
        label_bar(GetScalarBar(GetColorTransferFunction("force_magnitude"), view), "|contact force|")

    view.ResetCamera()
    cam = view.GetActiveCamera()
    if flat:
        view.CameraParallelProjection = 1
        cx, cy = 0.5 * (bounds[0] + bounds[1]), 0.5 * (bounds[2] + bounds[3])
        cam.SetFocalPoint(cx, cy, 0.0)
        cam.SetPosition(cx, cy, 10.0 * max(bounds[1] - bounds[0], bounds[3] - bounds[2]))
        cam.SetViewUp(0.0, 1.0, 0.0)
        view.ResetCamera()
    else:
        cam.Elevation(20)
        cam.Azimuth(30)
        view.ResetCamera()
    Render(view)
    SaveScreenshot(a.png, view, ImageResolution=a.size)

    png = vtkPNGReader()
    png.SetFileName(a.png)
    png.Update()
    lo, hi = png.GetOutput().GetPointData().GetScalars().GetRange(0)
    print(f"render: {a.xmf}: {len(times)} snapshots, t = {t:g}: {n} particles, {nc} contacts ({active} carrying a force) "
          f"-> {a.png} ({a.size[0]}x{a.size[1]}, red channel {lo:g}..{hi:g})")
    if hi - lo < 10:
        sys.exit(f"render: {a.png} is blank")


if __name__ == "__main__":
    main()
