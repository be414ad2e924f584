package io.tidemark.bench.report;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.category.CategoryItemRenderer;
import org.jfree.chart.renderer.category.LineAndShapeRenderer;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * PNG charts drawn with JFreeChart (headless): records/s bars per sweep, and latency percentile curves in the
 * style of the HdrHistogram plotter (x: percentile on a {@code 1/(1-p)} log scale, y: microseconds, log scale).
 */
public final class Charts
{
    private static final int WIDTH = 900;
    private static final int HEIGHT = 520;
    /** The farthest percentile a curve reaches on the x axis: 99.9999%. */
    private static final double MAX_X = 1e6;

    static
    {
        System.setProperty("java.awt.headless", "true");
    }

    private Charts()
    {
    }

    /**
     * A bar chart of one value per category.
     *
     * @param file       the PNG to write.
     * @param title      chart title.
     * @param category   x axis label.
     * @param valueLabel y axis label.
     * @param values     category label to value, in order.
     */
    public static void bars(final Path file, final String title, final String category, final String valueLabel,
        final Map<String, Double> values) throws IOException
    {
        final DefaultCategoryDataset data = new DefaultCategoryDataset();
        values.forEach((k, v) -> data.addValue(v, valueLabel, k));
        final JFreeChart chart = ChartFactory.createBarChart(title, category, valueLabel, data,
            PlotOrientation.VERTICAL, false, false, false);
        final CategoryPlot plot = chart.getCategoryPlot();
        style(chart);
        final CategoryItemRenderer renderer = plot.getRenderer();
        renderer.setDefaultItemLabelGenerator(new StandardCategoryItemLabelGenerator("{2}",
            new DecimalFormat("#,##0")));
        renderer.setDefaultItemLabelsVisible(true);
        renderer.setSeriesPaint(0, new Color(0x2f, 0x6f, 0xb3));
        ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
    }

    /**
     * A line chart of one value per category (e.g. records/s by partition count).
     *
     * @param file       the PNG to write.
     * @param title      chart title.
     * @param category   x axis label.
     * @param valueLabel y axis label.
     * @param series     series name to (category label to value).
     */
    public static void lines(final Path file, final String title, final String category, final String valueLabel,
        final Map<String, Map<String, Double>> series) throws IOException
    {
        final DefaultCategoryDataset data = new DefaultCategoryDataset();
        series.forEach((name, values) -> values.forEach((k, v) -> data.addValue(v, name, k)));
        final JFreeChart chart = ChartFactory.createLineChart(title, category, valueLabel, data,
            PlotOrientation.VERTICAL, series.size() > 1, false, false);
        style(chart);
        final LineAndShapeRenderer renderer = (LineAndShapeRenderer)chart.getCategoryPlot().getRenderer();
        renderer.setDefaultShapesVisible(true);
        renderer.setDefaultItemLabelGenerator(new StandardCategoryItemLabelGenerator("{2}",
            new DecimalFormat("#,##0")));
        renderer.setDefaultItemLabelsVisible(true);
        for (int i = 0; i < series.size(); i++)
        {
            renderer.setSeriesStroke(i, new BasicStroke(2f));
        }
        ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
    }

    /**
     * Latency percentile curves.
     *
     * @param file   the PNG to write.
     * @param title  chart title.
     * @param curves series name to histogram (nanoseconds); empty or null histograms are skipped.
     */
    public static void percentiles(final Path file, final String title, final Map<String, Histogram> curves)
        throws IOException
    {
        final XYSeriesCollection data = new XYSeriesCollection();
        double lowest = Double.MAX_VALUE;
        double highest = 0;
        for (final Map.Entry<String, Histogram> e : curves.entrySet())
        {
            final Histogram h = e.getValue();
            if (null == h || h.getTotalCount() == 0)
            {
                continue;
            }
            final XYSeries series = new XYSeries(e.getKey(), false, true);
            for (final Map.Entry<Double, Double> point : curve(h).entrySet())
            {
                series.add(point.getKey(), point.getValue());
                lowest = Math.min(lowest, point.getValue());
                highest = Math.max(highest, point.getValue());
            }
            data.addSeries(series);
        }
        final JFreeChart chart = ChartFactory.createXYLineChart(title, "percentile", "latency (us)", data,
            PlotOrientation.VERTICAL, true, false, false);
        style(chart);
        final XYPlot plot = chart.getXYPlot();
        final LogAxis x = new LogAxis("percentile");
        x.setBase(10);
        x.setSmallestValue(1);
        x.setRange(1, MAX_X);
        x.setAutoTickUnitSelection(false);
        x.setTickUnit(new NumberTickUnit(1.0)); // one tick per power of ten: 0%, 90%, 99%, 99.9%, ...
        x.setNumberFormatOverride(new PercentileFormat());
        plot.setDomainAxis(x);
        final LogAxis y = new LogAxis("latency (us)");
        y.setBase(10);
        y.setSmallestValue(0.01);
        y.setNumberFormatOverride(new DecimalFormat("#,##0.##"));
        if (lowest != Double.MAX_VALUE)
        {
            final double low = Math.pow(10, Math.floor(Math.log10(Math.max(0.01, lowest))));
            final double high = Math.pow(10, Math.ceil(Math.log10(Math.max(highest, low * 10))));
            y.setRange(low, high);
            y.setAutoTickUnitSelection(false);
            y.setTickUnit(new NumberTickUnit(1.0));
        }
        plot.setRangeAxis(y);
        final XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
        for (int i = 0; i < data.getSeriesCount(); i++)
        {
            renderer.setSeriesStroke(i, new BasicStroke(2f));
        }
        plot.setRenderer(renderer);
        ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
    }

    /**
     * @param h a histogram in nanoseconds.
     * @return x ({@code 1/(1-p)}) to latency in microseconds, as the HdrHistogram plotter draws it.
     */
    static Map<Double, Double> curve(final Histogram h)
    {
        final Map<Double, Double> points = new LinkedHashMap<>();
        for (final HistogramIterationValue v : h.percentiles(5))
        {
            final double p = v.getPercentileLevelIteratedTo() / 100.0;
            final double x = p >= 1.0 ? MAX_X : Math.min(MAX_X, 1.0 / (1.0 - p));
            points.put(x, Math.max(0.01, h.highestEquivalentValue(v.getValueIteratedTo()) / 1e3));
            if (p >= 1.0)
            {
                break;
            }
        }
        return points;
    }

    private static void style(final JFreeChart chart)
    {
        chart.setBackgroundPaint(Color.WHITE);
        chart.getPlot().setBackgroundPaint(new Color(0xf7, 0xf7, 0xf7));
    }

    /** Labels {@code 1/(1-p)} ticks as percentiles: 10 is "90%", 1000 is "99.9%". */
    static final class PercentileFormat extends NumberFormat
    {
        private static final long serialVersionUID = 1L;

        @Override
        public StringBuffer format(final double number, final StringBuffer toAppendTo, final FieldPosition pos)
        {
            return toAppendTo.append(label(number));
        }

        @Override
        public StringBuffer format(final long number, final StringBuffer toAppendTo, final FieldPosition pos)
        {
            return format((double)number, toAppendTo, pos);
        }

        @Override
        public Number parse(final String source, final ParsePosition parsePosition)
        {
            return null;
        }

        /**
         * @param x {@code 1/(1-p)}.
         * @return p as a percentage, e.g. "99.9%".
         */
        static String label(final double x)
        {
            if (x <= 1)
            {
                return "0%";
            }
            final double percent = 100.0 * (1.0 - 1.0 / x);
            String text = String.format(Locale.ROOT, "%.6f", percent);
            text = text.contains(".") ? text.replaceAll("0+$", "").replaceAll("\\.$", "") : text;
            return text + "%";
        }
    }
}
