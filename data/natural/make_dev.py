#!/usr/bin/env python3
"""Writes dev.jsonl: questions for choosing between models (see README.md).

Hand-written on 2026-12-07, apart from both tinygsm's generator and the held-out set's grammar.
Each line is (question, answer expression); the expression is checked to give an integer.
"""
import json
import os

QUESTIONS = [
    # bare arithmetic
    ("what's 56 + 27", "56+27"),
    ("How much is 9 times 7?", "9*7"),
    ("63 minus 28?", "63-28"),
    ("Can you tell me what 72 divided by 8 is?", "72//8"),
    ("I need 38+45", "38+45"),
    ("12 x 6 = ?", "12*6"),
    ("Please work out 91 - 47.", "91-47"),
    ("sum of 19 and 64", "19+64"),
    ("What is 30 + 12 - 9?", "30+12-9"),
    ("Calculate 4 * 9 + 15", "4*9+15"),
    ("What do you get from 100 - 7 * 8?", "100-7*8"),
    ("How much is 48 / 6 + 20?", "48//6+20"),
    ("Find 25 + 25 + 25.", "25+25+25"),
    ("Quick one: 81 / 9", "81//9"),
    ("What's half of 58?", "58//2"),
    ("what is double 37", "37*2"),
    ("Subtract 14 from 52, please.", "52-14"),
    ("Multiply 11 and 8.", "11*8"),
    ("What is 7 more than 68?", "68+7"),
    ("Take 18 away from 40 and then add 5.", "40-18+5"),
    # one step
    ("Grace has 23 shells. She finds 14 more at the beach. How many shells does she have now?", "23+14"),
    ("Marco had 41 stickers and gave 16 to his sister. How many stickers does Marco have left?", "41-16"),
    ("A shelf holds 6 rows of 8 jars. How many jars are on the shelf?", "6*8"),
    ("Aisha has 36 grapes and shares them equally with 3 friends, so 4 people get the same amount. How many grapes does each person get?", "36//4"),
    ("Tobias scored 17 points in the first game and 25 points in the second. How many points did he score in both games?", "17+25"),
    ("Yara's garden has 52 tulips. Rabbits eat 19 of them. How many tulips are left?", "52-19"),
    ("Felix reads 12 pages every night. How many pages does he read in 5 nights?", "12*5"),
    ("Ngozi baked 45 rolls and sold 28 of them at the market. How many rolls does she still have?", "45-28"),
    ("There are 29 kids on the bus. At the next stop 13 more get on. How many kids are on the bus now?", "29+13"),
    ("Pedro has 3 times as many coins as Hannah. Hannah has 15 coins. How many coins does Pedro have?", "3*15"),
    ("Kai is saving for a bike. He had $34 and his uncle gave him $27. How much money does Kai have?", "34+27"),
    ("Rosa bought a scarf for $18. She paid with $50. How much change did she get?", "50-18"),
    ("Luca has 64 blocks. He puts them into 8 equal towers. How many blocks are in each tower?", "64//8"),
    ("Amir walked 7 km in the morning and 9 km in the evening. How far did he walk in total?", "7+9"),
    ("Selma has 80 beads and uses 35 of them for a necklace. How many beads does she have left over?", "80-35"),
    ("Jin collects 4 eggs a day. How many eggs does he collect in a week of 7 days?", "4*7"),
    ("Beatriz had 21 markers. Her teacher gave her 9 more. How many markers does Beatriz have?", "21+9"),
    ("Oliver's team needs 60 points to win. They have 43. How many more points do they need?", "60-43"),
    ("Farah has 18 plums, which is 7 fewer than Nikolai. How many plums does Nikolai have?", "18+7"),
    ("Tess has twice as many ribbons as Oliver, who has 26. How many ribbons does Tess have?", "2*26"),
    ("A box has 96 crayons. They are split evenly among 12 children. How many crayons does each child get?", "96//12"),
    ("Nikolai ran 5 laps on Monday and 8 laps on Tuesday. How many laps did he run altogether?", "5+8"),
    ("There were 75 balloons at the party. 38 of them popped. How many balloons were left?", "75-38"),
    ("Grace buys 9 packs of gum with 5 sticks in each pack. How many sticks of gum does she have?", "9*5"),
    ("Marco has 47 cards and Aisha has 36 cards. How many cards do they have together?", "47+36"),
    ("Kai had 70 dollars and spent 24 dollars on a game. How much does he have now?", "70-24"),
    ("My class has 14 girls and 15 boys. How many students are in my class?", "14+15"),
    ("I had 50 candies and ate 12. How many are left?", "50-12"),
    ("Each ticket costs $8. How much do 9 tickets cost?", "9*8"),
    ("Hannah cut a 48 cm ribbon into 6 equal pieces. How long is each piece?", "48//6"),
    # two steps
    ("Yara had 40 apples. She sold 15 and then picked 22 more. How many apples does she have now?", "40-15+22"),
    ("Felix has 12 marbles. Pedro has 5 more than Felix. How many marbles do they have together?", "12+12+5"),
    ("Ngozi buys 4 bags of oranges with 6 oranges in each bag, then eats 3 oranges. How many oranges are left?", "4*6-3"),
    ("Tobias had $90. He spent $25 on shoes and $30 on a jacket. How much money does he have left?", "90-25-30"),
    ("Rosa has 18 pencils. Luca has twice as many as Rosa. How many pencils do they have in all?", "18+18*2"),
    ("Amir earns $7 an hour. He works 6 hours and then spends $12 on lunch. How much money does he have?", "7*6-12"),
    ("Selma had 64 stamps. She gave half of them to her brother and then bought 9 more. How many stamps does she have?", "64//2+9"),
    ("Jin has 25 books. He gets 11 more for his birthday and gives 8 to the library. How many books does he have now?", "25+11-8"),
    ("Beatriz picks 9 flowers a day for 4 days. Then she gives 10 flowers to her mom. How many flowers does she have left?", "9*4-10"),
    ("Oliver had 52 cookies. He ate 4 and split the rest equally between 2 plates. How many cookies are on each plate?", "(52-4)//2"),
    ("A farmer has 33 cows and 28 sheep. He sells 10 sheep. How many animals does he have now?", "33+28-10"),
    ("Farah reads 15 pages on Saturday and 3 times as many on Sunday. How many pages did she read over the weekend?", "15+15*3"),
    ("Tess had 100 dollars. She bought 3 books that cost 12 dollars each. How much money does she have left?", "100-3*12"),
    ("Nikolai has 27 toy trains. Grace has 9 fewer than Nikolai. How many toy trains do Grace and Nikolai have together?", "27+(27-9)"),
    ("What is (14 + 6) * 3?", "(14+6)*3"),
    ("Kai has 8 boxes of 7 pens. He loses 6 pens. How many pens does he have?", "8*7-6"),
    ("Marco found 13 shells, Aisha found 19 shells, and they lost 7 on the way home. How many shells do they have now?", "13+19-7"),
    ("Pedro is 11 years old. His sister is 4 years younger. His dad is 3 times as old as his sister. How old is his dad?", "(11-4)*3"),
    ("Hannah had 30 stickers. She got 14 more from a friend, then shared them all equally with her brother. How many stickers did each of them get?", "(30+14)//2"),
    ("There are 45 students. 17 go home early and 8 more arrive late. How many students are there now?", "45-17+8"),
    # three steps
    ("Luca had 20 marbles. He won 15 more, lost 9, and then doubled what he had. How many marbles does he have?", "(20+15-9)*2"),
    ("Yara has 3 boxes of 12 cupcakes. She sells 10 cupcakes and eats 2. How many cupcakes are left?", "3*12-10-2"),
    ("Amir had $60. He earned $25, spent $18 on a book, and gave $7 to his friend. How much money does he have now?", "60+25-18-7"),
    ("Felix has 16 cards. Jin has 4 more than Felix, and Rosa has twice as many as Jin. How many cards does Rosa have?", "(16+4)*2"),
    ("Selma picked 48 strawberries. She ate 6, gave 12 to her neighbor, and put the rest into 5 equal bowls. How many strawberries are in each bowl?", "(48-6-12)//5"),
    ("Ngozi runs 3 miles every day for 6 days, then runs 5 more miles. How many miles has she run?", "3*6+5"),
    ("Beatriz had 90 beads. She used 24 for a bracelet and 31 for a necklace, then bought 15 more. How many beads does she have now?", "90-24-31+15"),
    ("Oliver has 7 bags with 8 apples each. He gives away 20 apples and then buys 9. How many apples does he have?", "7*8-20+9"),
    ("Tobias saved $5 a week for 8 weeks. His grandma doubled it. Then he spent $30. How much does he have left?", "5*8*2-30"),
    ("Farah has 36 crayons and Tess has 12 fewer. Grace has as many as Farah and Tess together. How many crayons does Grace have?", "36+(36-12)"),
]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(here, "dev.jsonl")
    with open(out, "w") as f:
        for q, expr in QUESTIONS:
            a = eval(expr)  # noqa: S307 - our own literals
            assert isinstance(a, int) and 0 <= a <= 255, (q, a)
            steps = sum(expr.count(c) for c in "+-*/") - expr.count("//")
            f.write(json.dumps({"question": q, "answer": a, "steps": steps, "source": "dev",
                                "messages": [{"role": "user", "content": q}]}) + "\n")
    print(f"wrote {len(QUESTIONS)} questions to {out}")


if __name__ == "__main__":
    main()
