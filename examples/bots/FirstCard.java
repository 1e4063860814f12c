// A truco-bot/1 program in plain Java (no dependencies): it plays its first legal card when it may play one,
// says no to any call it must answer, and otherwise takes the first legal action. The protocol is in
// docs/protocol.md. Build and run it with:
//   javac -d build examples/bots/FirstCard.java
//   truco eval --agents "exec:java -cp build FirstCard" heuristic --matches 20
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class FirstCard {
    // Each legal action is {"name": "...", "id": N}; names hold no quotes (docs/actions.md), so a pattern reads them.
    private static final Pattern LEGAL = Pattern.compile("\\{\\s*\"name\"\\s*:\\s*\"([^\"]*)\"\\s*,\\s*\"id\"\\s*:\\s*(\\d+)\\s*\\}");
    private static final Pattern TYPE = Pattern.compile("\"type\"\\s*:\\s*\"([a-z_]+)\"");

    private FirstCard() {}

    static String choose(List<String> legal) {
        for (String name : legal) {
            if (name.startsWith("play:")) return name;
        }
        if (legal.contains("no_quiero")) return "no_quiero";
        return legal.get(0);
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            Matcher type = TYPE.matcher(line);
            if (!type.find() || !type.group(1).equals("act")) continue; // only "act" wants an answer
            int start = line.indexOf("\"legal\"");
            List<String> legal = new ArrayList<>();
            Matcher entry = LEGAL.matcher(line.substring(Math.max(start, 0)));
            while (entry.find()) legal.add(entry.group(1));
            System.out.println("{\"action\": \"" + choose(legal) + "\"}");
            System.out.flush();
        }
    }
}
